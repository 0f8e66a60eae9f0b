import { readBundleHeader } from '../bundle/read.js';
import { loadBundle } from '../match/engine.js';
import { channelBinding, type ChannelDefinition } from './definition.js';
import { checkBundleDestinations, destinationPolicy } from './destinations.js';
import { ChannelError, describeError } from './errors.js';
import type { FetchBytes } from './fetch-bytes.js';
import { requiredKeyVersion, usableInstalled } from './freshness.js';
import { gunzipLimited } from './gzip.js';
import { applyDelta } from './delta.js';
import {
  bundleFileName,
  channelFileUrl,
  deltaFileName,
  deltaIndexFileName,
  deltaIndexSignatureFileName,
  keyCertificateFileName,
  keyCertificateSignatureFileName,
  LATEST_TIMESTAMP_FILE,
  releaseFileName,
  releaseSignatureFileName,
} from './layout.js';
import { type ChannelLimits, DEFAULT_CHANNEL_LIMITS } from './limits.js';
import {
  checkCertificateBinding,
  checkDeltaIndexBinding,
  checkReleaseBinding,
  claimedKeyVersion,
  MAX_SIGNED_DOCUMENT_BYTES,
  parseDeltaIndex,
  parseKeyCertificate,
  parseRelease,
  type Release,
  sha256Hex,
} from './release.js';
import { raiseFloor, rootFloor } from './root-floor.js';
import { verifySignature } from './signature.js';
import type {
  ChannelRecord,
  ChannelStorage,
  CheckResult,
  InstalledBundle,
  LastCheck,
  SigningKeyRecord,
} from './state.js';
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
  /** Installed timestamp before the check (only if it applied under this definition). */
  previousTimestamp?: number;
  /** Installed timestamp after the check (unchanged unless `result` is `updated`). */
  installedTimestamp?: number;
  rulesetCount?: number;
  error?: LastCheck['error'];
  /** Set when a new bundle was downloaded (`updated`). */
  download?: ChannelDownload;
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);
const GZIP_MAGIC = [0x1f, 0x8b];

/** What a check learned that outlives its failure: a newer certified signing key revokes older ones. */
interface Learned {
  signingKey?: SigningKeyRecord;
  download?: ChannelDownload;
}

/** How the new bundle came: a delta from the installed release, or the whole bundle (and why no delta). */
export interface ChannelDownload {
  kind: 'delta' | 'full';
  /** Bytes of the delta or bundle file as received. */
  bytes: number;
  /** Why a delta the publisher offered was not used. */
  deltaProblem?: string;
}

/**
 * The online key for `version`: the remembered one when it is that version, else its
 * certificate, verified with the definition's root key and checked to name this channel.
 */
async function signingKeyFor(
  channel: ChannelDefinition,
  record: ChannelRecord | undefined,
  version: number,
  options: ChannelCheckOptions,
  limits: ChannelLimits,
): Promise<SigningKeyRecord> {
  const binding = channelBinding(channel);
  const known = record?.signingKey;
  if (known !== undefined && known.verifiedFor === binding && known.version === version)
    return known;
  const url = (file: string): string => channelFileUrl(channel.urlPrefix, file);
  const certBytes = await options.fetchBytes(url(keyCertificateFileName(version)), {
    maxBytes: MAX_SIGNED_DOCUMENT_BYTES,
  });
  const certSig = await options.fetchBytes(url(keyCertificateSignatureFileName(version)), {
    maxBytes: limits.maxSignatureBytes,
  });
  try {
    await verifySignature(channel.rootKey, certSig, certBytes);
  } catch (err) {
    throw new ChannelError(
      'bad-signature',
      `key certificate ${version}: ${describeError(err).message} (root key)`,
      { cause: err },
    );
  }
  const cert = parseKeyCertificate(certBytes, `key certificate ${version}`);
  checkCertificateBinding(cert, channel, version);
  return { version, key: cert.key, verifiedFor: binding };
}

/**
 * Downloads and verifies the newest release of a channel, or explains why not. Order matters:
 * nothing fetched is trusted (or recorded) before its signature has verified: the certificate
 * with the root key, the release with the certified key, then the bundle against the digest
 * and length in the release (which also bound how much is downloaded and inflated).
 * Returns `undefined` when the installed bundle is already the advertised one.
 */
async function fetchVerified(
  channel: ChannelDefinition,
  record: ChannelRecord | undefined,
  installed: InstalledBundle | undefined,
  options: ChannelCheckOptions,
  learned: Learned,
): Promise<Omit<InstalledBundle, 'installedAt'> | undefined> {
  const limits = { ...DEFAULT_CHANNEL_LIMITS, ...options.limits };
  const now = (options.now ?? nowSeconds)();
  const url = (file: string): string => channelFileUrl(channel.urlPrefix, file);
  const required = requiredKeyVersion(channel, record);

  const advertised = parseAdvertisedTimestamp(
    await options.fetchBytes(url(LATEST_TIMESTAMP_FILE), { maxBytes: limits.maxTimestampBytes }),
  );
  checkNotInFuture(advertised, now);
  if (advertised < channel.minTimestamp) {
    throw new ChannelError(
      'below-minimum',
      `channel advertises ${advertised} (${formatTimestamp(advertised)}), older than the definition's minimum ${channel.minTimestamp} (${formatTimestamp(channel.minTimestamp)}); possible replay of an old release`,
    );
  }
  // Rollback is judged against the newest release ever installed under this root key, under any
  // definition and even one whose key was revoked since.
  const floor = rootFloor(channel, record).timestamp;
  const newest = floor > 0 ? floor : undefined;
  if (newest !== undefined && advertised < newest) {
    throw new ChannelError(
      'not-newer',
      `channel advertises ${advertised} (${formatTimestamp(advertised)}), older than the installed ${newest} (${formatTimestamp(newest)}); possible replay, keeping the installed rulesets`,
    );
  }
  if (installed !== undefined && advertised === installed.timestamp) return undefined;
  if (
    channel.replacesDefaults &&
    options.defaultsTimestamp !== undefined &&
    advertised < options.defaultsTimestamp
  ) {
    throw new ChannelError(
      'older-than-defaults',
      `channel advertises ${advertised} (${formatTimestamp(advertised)}), older than the built-in rulesets (${formatTimestamp(options.defaultsTimestamp)}) it would replace`,
    );
  }

  const releaseBytes = await options.fetchBytes(url(releaseFileName(advertised)), {
    maxBytes: MAX_SIGNED_DOCUMENT_BYTES,
  });
  const releaseSig = await options.fetchBytes(url(releaseSignatureFileName(advertised)), {
    maxBytes: limits.maxSignatureBytes,
  });
  const keyVersion = claimedKeyVersion(releaseBytes);
  if (keyVersion < required) {
    throw new ChannelError(
      'key-revoked',
      `release ${advertised} is signed by key version ${keyVersion}, which is revoked (version ${required} or newer is required)`,
    );
  }
  const signingKey = await signingKeyFor(channel, record, keyVersion, options, limits);
  await verifySignature(signingKey.key, releaseSig, releaseBytes);
  const release = parseRelease(releaseBytes);
  checkReleaseBinding(release, channel, advertised, keyVersion);
  if (signingKey.version > (learned.signingKey?.version ?? 0)) learned.signingKey = signingKey;

  if (release.bundle.bytes > limits.maxBundleBytes)
    throw new ChannelError(
      'too-large',
      `release announces a bundle of ${release.bundle.bytes} bytes, above the limit of ${limits.maxBundleBytes}`,
    );
  // A delta from the installed release when the publisher signed one; the whole bundle otherwise
  // or when the delta fails in any way (the reason is reported).
  const viaDelta =
    installed === undefined
      ? { problem: null }
      : await bundleFromDelta(channel, installed, release, signingKey, options, limits);
  let bundle: Uint8Array;
  if ('bundle' in viaDelta) {
    bundle = viaDelta.bundle;
    learned.download = { kind: 'delta', bytes: viaDelta.bytes };
  } else {
    const body = await options.fetchBytes(url(bundleFileName(advertised)), {
      maxBytes: gzipBound(release.bundle.bytes, limits),
    });
    bundle = await inflatedMatching(
      body,
      release.bundle,
      `bundle ${bundleFileName(advertised)}`,
      'bad-signature',
      'the signed release',
    );
    learned.download = {
      kind: 'full',
      bytes: body.byteLength,
      ...(viaDelta.problem === null ? {} : { deltaProblem: viaDelta.problem }),
    };
  }

  let embedded: number;
  let rulesetCount: number;
  let engine;
  try {
    embedded = readBundleHeader(bundle).timestamp;
    // Full structural validation: the bundle must load before it may replace anything.
    engine = loadBundle(bundle);
    rulesetCount = engine.rulesetCount;
  } catch (err) {
    throw new ChannelError(
      'corrupt-bundle',
      `signed bundle does not load: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  if (embedded !== advertised) {
    throw new ChannelError(
      'timestamp-mismatch',
      `bundle carries timestamp ${embedded} (${formatTimestamp(embedded)}) but was published as ${advertised}; possible downgrade attack`,
    );
  }
  checkBundleDestinations(engine, destinationPolicy(channel.scope, channel.destinations));
  return {
    timestamp: advertised,
    bundle,
    rulesetCount,
    keyVersion,
    verifiedFor: channelBinding(channel),
  };
}

/** gzip never grows data by more than a few bytes per 16 KiB block; anything longer is not the file. */
function gzipBound(bytes: number, limits: ChannelLimits): number {
  return Math.min(limits.maxCompressedBytes, bytes + (bytes >> 6) + 1024);
}

/**
 * The file as published (.gz), or, when the server sent it with `Content-Encoding: gzip`, what
 * fetch already inflated; inflated no further than the signed length, and only the signed
 * length and digest decide.
 */
async function inflatedMatching(
  body: Uint8Array,
  signed: { bytes: number; sha256: string },
  what: string,
  code: 'bad-signature' | 'bad-delta',
  where: string,
): Promise<Uint8Array> {
  const isGzip = body[0] === GZIP_MAGIC[0] && body[1] === GZIP_MAGIC[1];
  const bytes = isGzip ? await gunzipLimited(body, signed.bytes) : body;
  if (bytes.byteLength !== signed.bytes || (await sha256Hex(bytes)) !== signed.sha256) {
    throw new ChannelError(code, `${what} does not match the digest in ${where}`);
  }
  return bytes;
}

/**
 * The release's bundle rebuilt from the installed one and a signed delta (delta.ts), or why
 * not (`problem` null: the publisher offers no delta from the installed release). Every file is
 * bounded as the full download is: the index and its signature by the signed-document limits,
 * the delta by its signed length, the result by the release's signed length; the result must
 * match the release's signed SHA-256. Never throws: the caller falls back to the full bundle.
 */
async function bundleFromDelta(
  channel: ChannelDefinition,
  installed: InstalledBundle,
  release: Release,
  signingKey: SigningKeyRecord,
  options: ChannelCheckOptions,
  limits: ChannelLimits,
): Promise<{ bundle: Uint8Array; bytes: number } | { problem: string | null }> {
  const url = (file: string): string => channelFileUrl(channel.urlPrefix, file);
  const ts = release.timestamp;
  let indexBytes: Uint8Array;
  try {
    indexBytes = await options.fetchBytes(url(deltaIndexFileName(ts)), {
      maxBytes: MAX_SIGNED_DOCUMENT_BYTES,
    });
  } catch {
    // No delta index (a publisher that writes none, or a first release): the full bundle it is.
    return { problem: null };
  }
  try {
    const indexSig = await options.fetchBytes(url(deltaIndexSignatureFileName(ts)), {
      maxBytes: limits.maxSignatureBytes,
    });
    try {
      await verifySignature(signingKey.key, indexSig, indexBytes);
    } catch (err) {
      throw new ChannelError('bad-delta', `delta index: ${describeError(err).message}`, {
        cause: err,
      });
    }
    const index = parseDeltaIndex(indexBytes);
    checkDeltaIndexBinding(index, release);
    const entry = index.deltas.find((d) => d.from === installed.timestamp);
    if (entry === undefined) return { problem: null };
    if (entry.file !== deltaFileName(entry.from, ts))
      throw new ChannelError('bad-delta', `delta index names file ${JSON.stringify(entry.file)}`);
    if (entry.fromSha256 !== (await sha256Hex(installed.bundle)))
      throw new ChannelError(
        'bad-delta',
        `the delta from ${entry.from} starts from another bundle than the installed one`,
      );
    if (entry.bytes > limits.maxBundleBytes)
      throw new ChannelError(
        'too-large',
        `delta of ${entry.bytes} bytes, above the limit of ${limits.maxBundleBytes}`,
      );
    const body = await options.fetchBytes(url(entry.file), {
      maxBytes: gzipBound(entry.bytes, limits),
    });
    const delta = await inflatedMatching(
      body,
      entry,
      `delta ${entry.file}`,
      'bad-delta',
      'the signed delta index',
    );
    const bundle = applyDelta(installed.bundle, delta, {
      timestamp: ts,
      maxBytes: release.bundle.bytes,
    });
    if (
      bundle.byteLength !== release.bundle.bytes ||
      (await sha256Hex(bundle)) !== release.bundle.sha256
    ) {
      throw new ChannelError(
        'bad-delta',
        `delta ${entry.file} does not rebuild the bundle of the signed release`,
      );
    }
    return { bundle, bytes: body.byteLength };
  } catch (err) {
    return { problem: describeError(err).message };
  }
}

/** Verifies the newest release without storing anything (for tools); `record` is what is installed. */
export async function fetchVerifiedBundle(
  channel: ChannelDefinition,
  record: ChannelRecord | undefined,
  options: ChannelCheckOptions,
): Promise<Omit<InstalledBundle, 'installedAt'> | undefined> {
  return fetchVerified(channel, record, usableInstalled(channel, record), options, {});
}

/**
 * One complete check of one channel: fetch, verify, and atomically install through `storage`.
 * Never throws for network, publisher or storage problems; they end up in the report and in
 * the record's `lastCheck`, and the previously installed bundle stays as it was.
 */
export async function checkChannel(
  channel: ChannelDefinition,
  storage: ChannelStorage,
  options: ChannelCheckOptions,
): Promise<ChannelCheckReport> {
  const clock = options.now ?? nowSeconds;
  const startedAt = clock();
  let record: ChannelRecord | undefined;
  try {
    record = await storage.load();
  } catch (err) {
    return {
      channel: channel.name,
      result: 'failed',
      error: {
        code: 'storage-failed',
        message: `cannot read channel state: ${describeError(err).message}`,
      },
    };
  }
  const previous = usableInstalled(channel, record);
  const base = { channel: channel.name, previousTimestamp: previous?.timestamp };
  const learned: Learned = {};

  let outcome:
    | { result: 'updated' | 'current'; installed: InstalledBundle | undefined }
    | { result: 'failed'; error: NonNullable<LastCheck['error']> };
  try {
    const fresh = await fetchVerified(channel, record, previous, options, learned);
    outcome = fresh
      ? { result: 'updated', installed: { ...fresh, installedAt: clock() } }
      : { result: 'current', installed: previous };
  } catch (err) {
    outcome = { result: 'failed', error: describeError(err) };
  }

  if (outcome.result !== 'failed') {
    const next: ChannelRecord = {
      channel,
      lastCheck: { at: startedAt, result: outcome.result },
      lastSuccessAt: startedAt,
    };
    if (outcome.installed) next.installed = outcome.installed;
    const signingKey = learned.signingKey ?? record?.signingKey;
    if (signingKey !== undefined && signingKey.verifiedFor === channelBinding(channel))
      next.signingKey = signingKey;
    next.floor = raiseFloor(rootFloor(channel, record), {
      keyVersion: learned.signingKey?.version,
      timestamp: outcome.installed?.timestamp,
    });
    try {
      await storage.save(next);
      return {
        ...base,
        result: outcome.result,
        installedTimestamp: outcome.installed?.timestamp,
        rulesetCount: outcome.installed?.rulesetCount,
        ...(outcome.result === 'updated' && learned.download !== undefined
          ? { download: learned.download }
          : {}),
      };
    } catch (err) {
      outcome = {
        result: 'failed',
        error: {
          code: 'storage-failed',
          message: `cannot save channel state: ${describeError(err).message}`,
        },
      };
    }
  }

  // Only the status changes (and a newer certified key, which revokes older ones). The record is
  // read again first: another client may have installed something newer meanwhile, and a failure
  // must never write the older state back over it.
  let latest = record;
  try {
    latest = await storage.load();
  } catch {
    // Keep what was read at the start.
  }
  // Under the definition checked now: a bundle verified for an earlier one (another root key,
  // scope, …) stays on disk but no longer applies.
  const failed: ChannelRecord = {
    ...(latest ?? { channel }),
    channel,
    lastCheck: { at: startedAt, result: 'failed', error: outcome.error },
  };
  const bound = channelBinding(channel);
  if (
    learned.signingKey &&
    (failed.signingKey?.verifiedFor !== bound ||
      failed.signingKey.version < learned.signingKey.version)
  )
    failed.signingKey = learned.signingKey;
  failed.floor = raiseFloor(rootFloor(channel, latest), {
    keyVersion: learned.signingKey?.version,
  });
  try {
    await storage.save(failed);
  } catch {
    // The report below still carries the original error; the state on disk is the previous one.
  }
  const kept = usableInstalled(channel, failed);
  return {
    ...base,
    result: 'failed',
    installedTimestamp: kept?.timestamp,
    rulesetCount: kept?.rulesetCount,
    error: outcome.error,
  };
}
