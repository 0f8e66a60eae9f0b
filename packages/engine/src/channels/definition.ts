import { parseDestinationHost } from './destinations.js';
import { compileRulesetRegex } from '../regex/safe-regex.js';
import { ChannelError } from './errors.js';
import { checkPublicJwk } from './signature.js';

/** Version of the definition and of the signed files (release, key certificate). */
export const CHANNEL_FORMAT = 2;

/**
 * A ruleset update channel: where to fetch, which root key vouches for the signing keys, which
 * URLs its rulesets may touch and where they may send them, and how old its rules may get.
 * Everything here is chosen by the user who subscribes; the signed release must repeat the
 * binding fields (name, URL prefix, scope, destinations) or it is refused.
 */
export interface ChannelDefinition {
  /** Unique, human-readable name; also keys the installed state. */
  name: string;
  /** `https:` URL the channel files live under (`<prefix>/latest-timestamp`, …). */
  urlPrefix: string;
  /**
   * RSA-PSS public key (JWK) of the channel's root, kept offline by the publisher. It signs
   * the certificates of the online signing keys (`key.<version>.json`), never a release.
   */
  rootKey: JsonWebKey;
  /** JavaScript regular expression source; the channel's rulesets only apply to URLs it matches. `''` matches all. */
  scope: string;
  /**
   * Hosts outside the scope that the channel's rules may still send URLs to (`cdn.example.net`,
   * or `*.example.net` for its subdomains). Every other destination must lie inside the scope.
   */
  destinations: string[];
  /** A release older than this (unix seconds) is never installed, not even on a first install. */
  minTimestamp: number;
  /** The installed release counts as stale once it is older than this many days. */
  maxAgeDays: number;
  /** Signing keys of lower versions are revoked: their releases are refused and stop applying. */
  minKeyVersion: number;
  /** When true and a bundle is installed, the built-in default rulesets are not used. */
  replacesDefaults: boolean;
}

const FIELDS = [
  'format',
  'name',
  'urlPrefix',
  'rootKey',
  'scope',
  'destinations',
  'minTimestamp',
  'maxAgeDays',
  'minKeyVersion',
  'replacesDefaults',
];
const KNOWN_FIELDS = new Set(FIELDS);
const MAX_NAME_LENGTH = 100;
const MAX_DESTINATIONS = 100;
export const MAX_AGE_DAYS_LIMIT = 365;

const isWholeNumber = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max;

/**
 * Validates a channel definition as read from JSON. Every problem is reported with the field
 * it concerns; unknown fields are refused so a typo (`replaceDefaults`) cannot silently change
 * behaviour, and definitions of the first format are refused with what to do instead.
 */
export function parseChannelDefinition(
  value: unknown,
  source = 'channel definition',
): ChannelDefinition {
  const fail = (message: string): never => {
    throw new ChannelError('invalid-definition', `${source}: ${message}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail('must be a JSON object');
  const obj = value as Record<string, unknown>;
  if (obj.format !== CHANNEL_FORMAT) {
    if (obj.format === undefined && 'publicKey' in obj) {
      return fail(
        `this is a format 1 channel definition (with "publicKey"), which is no longer accepted: it bound no channel name, scope or age to the signature. Ask the publisher for a format ${CHANNEL_FORMAT} definition (made by \`httpsify keygen\`)`,
      );
    }
    return fail(`"format" must be ${CHANNEL_FORMAT}, got ${JSON.stringify(obj.format)}`);
  }
  for (const key of Object.keys(obj)) {
    if (!KNOWN_FIELDS.has(key)) fail(`unknown field "${key}" (expected ${FIELDS.join(', ')})`);
  }

  const name = obj.name;
  if (typeof name !== 'string' || name.trim() === '')
    return fail('"name" must be a non-empty string');
  if (name.length > MAX_NAME_LENGTH) fail(`"name" is longer than ${MAX_NAME_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) fail('"name" contains control characters');

  const urlPrefix = obj.urlPrefix;
  if (typeof urlPrefix !== 'string') return fail('"urlPrefix" must be a string');
  let url: URL;
  try {
    url = new URL(urlPrefix);
  } catch {
    return fail(`"urlPrefix" is not a valid URL: ${JSON.stringify(urlPrefix)}`);
  }
  // The signature protects integrity; HTTPS also keeps which channels a user follows private.
  if (url.protocol !== 'https:')
    fail(`"urlPrefix" must be an https: URL, got ${JSON.stringify(urlPrefix)}`);
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    fail('"urlPrefix" must not contain a query, fragment or user name');

  const scope = obj.scope;
  if (typeof scope !== 'string')
    return fail(
      '"scope" is missing: a regular expression naming the URLs the channel may rewrite ("" for every URL, if that is really meant)',
    );
  const judged = scope === '' ? null : compileRulesetRegex(scope);
  if (judged !== null && !judged.ok) {
    fail(
      judged.refused
        ? `"scope" is refused: ${judged.reason}`
        : `"scope" is not a valid regular expression: ${judged.reason}`,
    );
  }

  const destinations = obj.destinations ?? [];
  if (!Array.isArray(destinations) || destinations.length > MAX_DESTINATIONS)
    return fail(`"destinations" must be a list of at most ${MAX_DESTINATIONS} host names`);
  for (const host of destinations) {
    try {
      parseDestinationHost(host);
    } catch (err) {
      fail(`"destinations": ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  const minTimestamp = obj.minTimestamp;
  if (!isWholeNumber(minTimestamp, 0, 9_999_999_999))
    return fail(
      '"minTimestamp" must be unix seconds (releases older than this are never installed)',
    );
  const maxAgeDays = obj.maxAgeDays;
  if (!isWholeNumber(maxAgeDays, 1, MAX_AGE_DAYS_LIMIT))
    return fail(`"maxAgeDays" must be a whole number of days from 1 to ${MAX_AGE_DAYS_LIMIT}`);
  const minKeyVersion = obj.minKeyVersion ?? 1;
  if (!isWholeNumber(minKeyVersion, 1, 1_000_000))
    return fail('"minKeyVersion" must be a whole number from 1');

  const replacesDefaults = obj.replacesDefaults ?? false;
  if (typeof replacesDefaults !== 'boolean')
    return fail('"replacesDefaults" must be true or false');

  if (obj.rootKey === undefined)
    return fail(
      '"rootKey" is missing (the root public key from `httpsify keygen`, file *.root.public.jwk)',
    );
  let rootKey: JsonWebKey;
  try {
    rootKey = checkPublicJwk(obj.rootKey);
  } catch (err) {
    return fail(`"rootKey": ${err instanceof Error ? err.message : String(err)}`);
  }

  return {
    name,
    urlPrefix,
    rootKey,
    scope,
    destinations: [...(destinations as string[])],
    minTimestamp,
    maxAgeDays,
    minKeyVersion,
    replacesDefaults,
  };
}

/** The definition as JSON, with its format: what `keygen` writes and the settings store. */
export function channelDefinitionJson(def: ChannelDefinition): Record<string, unknown> {
  return { format: CHANNEL_FORMAT, ...def };
}

/**
 * What an installed release was verified for: the fields the signature binds plus the root key.
 * A bundle verified under another value is not this channel's and does not apply.
 */
export function channelBinding(def: ChannelDefinition): string {
  return JSON.stringify([
    def.name,
    def.urlPrefix,
    def.scope,
    def.destinations,
    def.rootKey.n,
    def.rootKey.e,
  ]);
}
