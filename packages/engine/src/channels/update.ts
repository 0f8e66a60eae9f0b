import { readBundleHeader } from '../bundle/read.js';
import { loadBundle } from '../match/engine.js';
import type { ChannelDefinition } from './definition.js';
import { ChannelError, describeError } from './errors.js';
import type { FetchBytes } from './fetch-bytes.js';
import { gunzipLimited } from './gzip.js';
import { bundleFileName, channelFileUrl, LATEST_TIMESTAMP_FILE, signatureFileName } from './layout.js';
import { type ChannelLimits, DEFAULT_CHANNEL_LIMITS } from './limits.js';
import { verifySignature } from './signature.js';
import type { ChannelRecord, ChannelStorage, CheckResult, InstalledBundle, LastCheck } from './state.js';
import { checkNotInFuture, formatTimestamp, parseAdvertisedTimestamp } from './timestamp.js';

export interface ChannelCheckOptions {
  fetchBytes: FetchBytes;
  /** Unix seconds; injectable so tests and the extension's alarm handler control time. */
  now?: () => number;
  /**
   * Timestamp of the rulesets shipped with the client. A channel that replaces the defaults
   * must never install something older than them.
   */
  defaultsTimestamp?: number;
  limits?: Partial<ChannelLimits>;
}

export interface ChannelCheckReport {
  channel: string;
  result: CheckResult;
  /** Installed timestamp before the check. */
  previousTimestamp?: number;
  /** Installed timestamp after the check (unchanged unless `result` is `updated`). */
  installedTimestamp?: number;
  rulesetCount?: number;
  error?: LastCheck['error'];
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * Downloads and verifies the newest bundle of a channel, or explains why not. Order matters:
 * nothing fetched is trusted (or recorded) before the signature over the exact compressed
 * bytes has verified, and only a fully checked bundle replaces the installed one.
 * Returns `undefined` when the installed bundle is already the advertised one.
 */
export async function fetchVerifiedBundle(
  channel: ChannelDefinition,
  installedTimestamp: number | undefined,
  options: ChannelCheckOptions,
): Promise<Omit<InstalledBundle, 'installedAt'> | undefined> {
  const limits = { ...DEFAULT_CHANNEL_LIMITS, ...options.limits };
  const now = (options.now ?? nowSeconds)();
  const url = (file: string): string => channelFileUrl(channel.urlPrefix, file);

  const advertised = parseAdvertisedTimestamp(await options.fetchBytes(url(LATEST_TIMESTAMP_FILE), { maxBytes: limits.maxTimestampBytes }));
  if (installedTimestamp !== undefined) {
    if (advertised === installedTimestamp) return undefined;
    if (advertised < installedTimestamp) {
      throw new ChannelError(
        'not-newer',
        `channel advertises ${advertised} (${formatTimestamp(advertised)}), older than the installed ${installedTimestamp} (${formatTimestamp(installedTimestamp)}); possible replay, keeping the installed rulesets`,
      );
    }
  }
  if (channel.replacesDefaults && options.defaultsTimestamp !== undefined && advertised < options.defaultsTimestamp) {
    throw new ChannelError(
      'older-than-defaults',
      `channel advertises ${advertised} (${formatTimestamp(advertised)}), older than the built-in rulesets (${formatTimestamp(options.defaultsTimestamp)}) it would replace`,
    );
  }
  checkNotInFuture(advertised, now);

  const signature = await options.fetchBytes(url(signatureFileName(advertised)), { maxBytes: limits.maxSignatureBytes });
  const compressed = await options.fetchBytes(url(bundleFileName(advertised)), { maxBytes: limits.maxCompressedBytes });
  await verifySignature(channel.publicKey, signature, compressed);

  const bundle = await gunzipLimited(compressed, limits.maxBundleBytes);
  let embedded: number;
  let rulesetCount: number;
  try {
    embedded = readBundleHeader(bundle).timestamp;
    // Full structural validation: the bundle must load before it may replace anything.
    rulesetCount = loadBundle(bundle).rulesetCount;
  } catch (err) {
    throw new ChannelError('corrupt-bundle', `signed bundle does not load: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  // The signature covers the bytes but not the file name: an old signed bundle served under a
  // new timestamp is caught here.
  if (embedded !== advertised) {
    throw new ChannelError(
      'timestamp-mismatch',
      `bundle carries timestamp ${embedded} (${formatTimestamp(embedded)}) but was published as ${advertised}; possible downgrade attack`,
    );
  }
  return { timestamp: advertised, bundle, rulesetCount };
}

/**
 * One complete check of one channel: fetch, verify, and atomically install through `storage`.
 * Never throws for network, publisher or storage problems; they end up in the report and in
 * the record's `lastCheck`, and the previously installed bundle stays active.
 */
export async function checkChannel(channel: ChannelDefinition, storage: ChannelStorage, options: ChannelCheckOptions): Promise<ChannelCheckReport> {
  const clock = options.now ?? nowSeconds;
  const startedAt = clock();
  let record: ChannelRecord | undefined;
  try {
    record = await storage.load();
  } catch (err) {
    return { channel: channel.name, result: 'failed', error: { code: 'storage-failed', message: `cannot read channel state: ${describeError(err).message}` } };
  }
  const previous = record?.installed;
  const base = { channel: channel.name, previousTimestamp: previous?.timestamp };

  let outcome: { result: 'updated' | 'current'; installed: InstalledBundle | undefined } | { result: 'failed'; error: NonNullable<LastCheck['error']> };
  try {
    const fresh = await fetchVerifiedBundle(channel, previous?.timestamp, options);
    outcome = fresh ? { result: 'updated', installed: { ...fresh, installedAt: clock() } } : { result: 'current', installed: previous };
  } catch (err) {
    outcome = { result: 'failed', error: describeError(err) };
  }

  if (outcome.result !== 'failed') {
    const next: ChannelRecord = { channel, installed: outcome.installed, lastCheck: { at: startedAt, result: outcome.result }, lastSuccessAt: startedAt };
    try {
      await storage.save(next);
      return { ...base, result: outcome.result, installedTimestamp: outcome.installed?.timestamp, rulesetCount: outcome.installed?.rulesetCount };
    } catch (err) {
      outcome = { result: 'failed', error: { code: 'storage-failed', message: `cannot save channel state: ${describeError(err).message}` } };
    }
  }

  // Only the status changes; the previous bundle (if any) stays installed and active.
  const failed: ChannelRecord = { channel, installed: previous, lastCheck: { at: startedAt, result: 'failed', error: outcome.error } };
  if (record?.lastSuccessAt !== undefined) failed.lastSuccessAt = record.lastSuccessAt;
  try {
    await storage.save(failed);
  } catch {
    // The report below still carries the original error; the state on disk is the previous one.
  }
  return { ...base, result: 'failed', installedTimestamp: previous?.timestamp, rulesetCount: previous?.rulesetCount, error: outcome.error };
}
