/**
 * Update channels' problems in words: which message (in _locales) says what went wrong and
 * what to do. The raw text (the engine's message, its code, the URL) goes under "Details".
 * Pure functions over the strings and codes the engine and the background produce, so the
 * mapping is tested on the real ones.
 */

/** A failed check, by the engine's `ChannelErrorCode` (or `internal`). */
const CHECK: Record<string, string> = {
  'fetch-failed': 'channelProblemUnreachable',
  'insecure-redirect': 'channelProblemInsecure',
  'too-large': 'channelProblemTooLarge',
  'invalid-timestamp': 'channelProblemUnreadable',
  'invalid-release': 'channelProblemUnreadable',
  'corrupt-bundle': 'channelProblemUnreadable',
  // A delta is only ever seen when the full download failed too; both mean the same here.
  'bad-delta': 'channelProblemUnreadable',
  'wrong-channel': 'channelProblemUnreadable',
  'timestamp-mismatch': 'channelProblemUnreadable',
  'not-newer': 'channelProblemNotNewer',
  'older-than-defaults': 'channelProblemNotNewer',
  'below-minimum': 'channelProblemNotNewer',
  'bad-signature': 'channelProblemSignature',
  'invalid-key': 'channelProblemSignature',
  'key-revoked': 'channelProblemSignature',
  'destination-outside-scope': 'channelProblemScope',
  'invalid-definition': 'channelProblemDefinition',
  'storage-failed': 'channelProblemStorage',
  locked: 'channelProblemBusy',
};

export function channelCheckProblem(code: string): string {
  return CHECK[code] ?? 'channelProblemCheckFailed';
}

/** A definition (pasted, or fetched from an address) that was not added, by the refusal's shape. */
const ADD: [RegExp, string][] = [
  [/^not JSON\b|^not a web address$/, 'channelAddNotDefinition'],
  [/must start with https:\/\//, 'channelAddNeedsHttps'],
  [/could not be fetched/, 'channelAddUnreachable'],
  [
    /the server answered \d+|larger than .* not a channel definition|not UTF-8/,
    'channelAddNoDefinitionThere',
  ],
  [/^a channel cannot be named/, 'channelAddNameTaken'],
  [/^channel definition: /, 'channelAddDamaged'],
];

export function channelAddProblem(raw: string): string {
  for (const [re, key] of ADD) if (re.test(raw)) return key;
  return 'channelAddFailed';
}

/** Why this browser does not (fully) apply a channel (Chromium's rule limits), by its shape. */
export function channelBrowserProblem(raw: string): string {
  if (/applies at most \d+ channels/.test(raw)) return 'channelBrowserTooMany';
  if (/do not fit/.test(raw)) return 'channelBrowserTooBig';
  if (/left out|cannot be expressed/.test(raw)) return 'channelBrowserPartly';
  return 'channelBrowserNotApplied';
}

/** The one status a channel shows: its pill's words and tone (never two that disagree). */
export type ChannelPill = { key: string; tone: 'ok' | 'warn' | 'busy' | 'none' };
export const CHECKING_PILL: ChannelPill = { key: 'channelPillChecking', tone: 'busy' };

export function channelPill(row: {
  checking: boolean;
  installed: unknown;
  stale: boolean;
  notInUse: unknown;
  lastCheck: { result: 'updated' | 'current' | 'failed' } | null;
  platformProblem: string | null;
  storageProblem: string | null;
}): ChannelPill {
  if (row.checking) return CHECKING_PILL;
  // A stored bundle that cannot be used says so first: nothing of this channel applies.
  if (row.notInUse !== null) return { key: 'channelPillNotInUse', tone: 'warn' };
  const problem =
    row.stale ||
    row.lastCheck?.result === 'failed' ||
    row.platformProblem !== null ||
    row.storageProblem !== null;
  if (problem) return { key: 'channelPillProblem', tone: 'warn' };
  if (row.installed === null) return { key: 'channelPillWaiting', tone: 'none' };
  return { key: 'channelPillCurrent', tone: 'ok' };
}
