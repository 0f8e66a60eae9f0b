import {
  ChannelError,
  channelDefinitionJson,
  checkPublicJwk,
  parseChannelDefinition,
  type ChannelRecord,
  type LastCheck,
  type RootFloor,
  type SigningKeyRecord,
} from '@httpsify/engine/channels';
import { base64ToBytes, bytesToBase64 } from './base64.js';

/**
 * Bumped if the stored shape ever changes; an unknown format is reported, not guessed at.
 * 2: channel format 2 (key versions, bindings, the newest certified signing key).
 */
export const RECORD_FORMAT = 2;

/** A ChannelRecord as JSON-safe storage.local value: the bundle as base64. */
export interface StoredChannelRecord {
  format: number;
  channel: unknown;
  installed?: {
    timestamp: number;
    rulesetCount: number;
    installedAt: number;
    keyVersion: number;
    verifiedFor: string;
    bytes: number;
    bundle: string;
  };
  signingKey?: SigningKeyRecord;
  floor?: RootFloor;
  lastCheck?: LastCheck;
  lastSuccessAt?: number;
}

export function encodeChannelRecord(record: ChannelRecord): StoredChannelRecord {
  const stored: StoredChannelRecord = {
    format: RECORD_FORMAT,
    channel: channelDefinitionJson(record.channel),
  };
  const i = record.installed;
  if (i) {
    stored.installed = {
      timestamp: i.timestamp,
      rulesetCount: i.rulesetCount,
      installedAt: i.installedAt,
      keyVersion: i.keyVersion,
      verifiedFor: i.verifiedFor,
      bytes: i.bundle.byteLength,
      bundle: bytesToBase64(i.bundle),
    };
  }
  if (record.signingKey) stored.signingKey = record.signingKey;
  if (record.floor) stored.floor = { ...record.floor };
  if (record.lastCheck) stored.lastCheck = record.lastCheck;
  if (record.lastSuccessAt !== undefined) stored.lastSuccessAt = record.lastSuccessAt;
  return stored;
}

const isSeconds = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const RESULTS = new Set(['updated', 'current', 'failed']);

/**
 * Reads a stored record back, checking every field: storage can be damaged or written by
 * another version. Throws a `storage-failed` ChannelError that says what is wrong; the bundle
 * itself is validated again when it is loaded.
 */
export function decodeChannelRecord(value: unknown, key: string): ChannelRecord {
  const fail = (why: string): never => {
    throw new ChannelError(
      'storage-failed',
      `stored channel state "${key}" is damaged: ${why}; the next check installs the channel again`,
    );
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail('not an object');
  const v = value as Partial<StoredChannelRecord>;
  if (v.format !== RECORD_FORMAT) return fail(`unknown format ${JSON.stringify(v.format)}`);
  let channel;
  try {
    channel = parseChannelDefinition(v.channel, 'channel');
  } catch (err) {
    return fail((err as Error).message);
  }
  const record: ChannelRecord = { channel };
  if (v.installed !== undefined) {
    const i = v.installed;
    if (typeof i !== 'object' || i === null) return fail('"installed" is not an object');
    if (
      !isSeconds(i.timestamp) ||
      !isSeconds(i.rulesetCount) ||
      !isSeconds(i.installedAt) ||
      !isSeconds(i.bytes) ||
      !isSeconds(i.keyVersion)
    )
      return fail('"installed" has a bad number');
    if (typeof i.verifiedFor !== 'string')
      return fail('"installed" does not say what it was verified for');
    if (typeof i.bundle !== 'string') return fail('the bundle is missing');
    let bundle: Uint8Array;
    try {
      bundle = base64ToBytes(i.bundle);
    } catch (err) {
      return fail(`the bundle is ${(err as Error).message}`);
    }
    if (bundle.byteLength !== i.bytes)
      return fail(
        `the bundle's size in bytes is ${bundle.byteLength}, but the record says ${i.bytes}`,
      );
    record.installed = {
      timestamp: i.timestamp,
      rulesetCount: i.rulesetCount,
      installedAt: i.installedAt,
      keyVersion: i.keyVersion,
      verifiedFor: i.verifiedFor,
      bundle,
    };
  }
  if (v.signingKey !== undefined) {
    const k = v.signingKey;
    if (
      typeof k !== 'object' ||
      k === null ||
      !isSeconds(k.version) ||
      typeof k.verifiedFor !== 'string'
    )
      return fail('"signingKey" is malformed');
    try {
      record.signingKey = {
        version: k.version,
        key: checkPublicJwk(k.key),
        verifiedFor: k.verifiedFor,
      };
    } catch (err) {
      return fail(`"signingKey": ${(err as Error).message}`);
    }
  }
  if (v.floor !== undefined) {
    const f = v.floor;
    if (
      typeof f !== 'object' ||
      f === null ||
      typeof f.root !== 'string' ||
      !isSeconds(f.keyVersion) ||
      !isSeconds(f.timestamp)
    )
      return fail('"floor" is malformed');
    record.floor = { root: f.root, keyVersion: f.keyVersion, timestamp: f.timestamp };
  }
  if (v.lastCheck !== undefined) {
    const c = v.lastCheck;
    if (typeof c !== 'object' || c === null || !isSeconds(c.at) || !RESULTS.has(c.result))
      return fail('"lastCheck" is malformed');
    const error = c.error;
    if (
      error !== undefined &&
      (typeof error !== 'object' ||
        error === null ||
        typeof error.code !== 'string' ||
        typeof error.message !== 'string')
    ) {
      return fail('"lastCheck.error" is malformed');
    }
    record.lastCheck =
      error === undefined
        ? { at: c.at, result: c.result }
        : { at: c.at, result: c.result, error: { code: error.code, message: error.message } };
  }
  if (v.lastSuccessAt !== undefined) {
    if (!isSeconds(v.lastSuccessAt)) return fail('"lastSuccessAt" is not a time');
    record.lastSuccessAt = v.lastSuccessAt;
  }
  return record;
}
