import type { ChannelDefinition } from './definition.js';
import type { ChannelErrorCode } from './errors.js';

/** A bundle that passed every check and is the channel's active rulesets. */
export interface InstalledBundle {
  /** The verified timestamp: advertised, signed, and embedded in the bundle header. */
  timestamp: number;
  /** The decompressed compiled bundle, ready for `loadBundle`. */
  bundle: Uint8Array;
  rulesetCount: number;
  /** Unix seconds of installation. */
  installedAt: number;
  /** Version of the online key that signed the release; revoked once a higher one is known. */
  keyVersion: number;
  /** `channelBinding` of the definition it was verified for; under any other it does not apply. */
  verifiedFor: string;
}

/** The newest online key seen for a channel, certified by its root key. */
export interface SigningKeyRecord {
  version: number;
  key: JsonWebKey;
  /** `channelBinding` of the definition whose root verified it. */
  verifiedFor: string;
}

/**
 * Highest key version and installed release timestamp seen under one root key. Kept across
 * definition changes under that root (root-floor.ts), so revocation and the rollback floor
 * cannot be reset by widening a scope.
 */
export interface RootFloor {
  /** `rootKeyId` of the root key. */
  root: string;
  keyVersion: number;
  timestamp: number;
}

export type CheckResult = 'updated' | 'current' | 'failed';

export interface LastCheck {
  /** Unix seconds when the check started. */
  at: number;
  result: CheckResult;
  /** Present when `result` is `failed`; shown in the CLI and on the options page. */
  error?: { code: ChannelErrorCode | 'internal'; message: string };
}

/**
 * Everything a client keeps per channel. Nothing here comes from the network unless it was
 * verified first: a failed check only replaces `lastCheck`, so it is retried next time.
 */
export interface ChannelRecord {
  /** The definition used by the last check (so installed bundles can be applied without the channel file). */
  channel: ChannelDefinition;
  installed?: InstalledBundle;
  /** Remembered so a later check needs no certificate download and so older keys stay revoked. */
  signingKey?: SigningKeyRecord;
  /** Revocation and rollback floor of the root key (see RootFloor). */
  floor?: RootFloor;
  lastCheck?: LastCheck;
  /** Unix seconds of the last check that ended `updated` or `current`. */
  lastSuccessAt?: number;
}

/**
 * Per-channel persistence, provided by the host (files for the CLI, `chrome.storage` for the
 * extension). `save` must replace the record atomically: after a crash, a reader sees either
 * the previous record or the new one, never a new timestamp with an old bundle.
 */
export interface ChannelStorage {
  load(): Promise<ChannelRecord | undefined>;
  save(record: ChannelRecord): Promise<void>;
}
