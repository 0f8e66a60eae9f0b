import { CHANNEL_FORMAT, type ChannelDefinition } from './definition.js';
import { ChannelError } from './errors.js';
import { bundleFileName } from './layout.js';
import { checkPublicJwk } from './signature.js';
import { formatTimestamp } from './timestamp.js';

/**
 * The signed documents of a channel. Both are JSON, signed as exact bytes (no canonical form to
 * get wrong, and `openssl dgst -sign` can sign them as files). Each names its type, the format,
 * the channel and its URL prefix, so a signature made for one channel, or one kind of document,
 * is worthless for another.
 */
const RELEASE_TYPE = 'httpsify-release';
const KEY_TYPE = 'httpsify-signing-key';
const DELTAS_TYPE = 'httpsify-deltas';

/** The root key's statement: "this online key signs releases of this channel, as version N". */
export interface KeyCertificate {
  channel: string;
  urlPrefix: string;
  /** Raising it revokes every lower version for clients that have seen it. */
  version: number;
  key: JsonWebKey;
}

/** The online key's statement about one release. */
export interface Release {
  channel: string;
  urlPrefix: string;
  scope: string;
  destinations: string[];
  timestamp: number;
  keyVersion: number;
  bundle: {
    file: string;
    /** Length of the decompressed bundle; also bounds what is downloaded and inflated. */
    bytes: number;
    /** SHA-256 of the decompressed bundle, lower-case hex. */
    sha256: string;
  };
}

/**
 * The online key's statement about the deltas to one release (delta.ts): from which earlier
 * releases (timestamp and the SHA-256 of their bundle) B's bundle can be rebuilt, and the
 * length and SHA-256 of each delta as served. A separate document, so clients that know nothing
 * of deltas still read the release (its fields are checked strictly).
 */
export interface DeltaIndex {
  channel: string;
  urlPrefix: string;
  timestamp: number;
  keyVersion: number;
  /** B's bundle, exactly as its release states it. */
  bundle: Release['bundle'];
  deltas: DeltaEntry[];
}

export interface DeltaEntry {
  /** Timestamp of release A. */
  from: number;
  /** SHA-256 of A's bundle: a client whose installed bundle differs does not use the delta. */
  fromSha256: string;
  file: string;
  /** Length of the delta (ungzipped); bounds what is downloaded and inflated. */
  bytes: number;
  /** SHA-256 of the delta (ungzipped). */
  sha256: string;
}

/** Most deltas one index may list. */
export const MAX_DELTAS = 16;

/** The signed files are small; this bounds what is read before a signature is checked. */
export const MAX_SIGNED_DOCUMENT_BYTES = 64 * 1024;

const encode = (value: unknown): Uint8Array =>
  new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);

export function keyCertificateBytes(cert: KeyCertificate): Uint8Array {
  return encode({
    type: KEY_TYPE,
    format: CHANNEL_FORMAT,
    channel: cert.channel,
    urlPrefix: cert.urlPrefix,
    version: cert.version,
    key: checkPublicJwk(cert.key),
  });
}

export function deltaIndexBytes(index: DeltaIndex): Uint8Array {
  const { channel, urlPrefix, timestamp, keyVersion, bundle, deltas } = index;
  return encode({
    type: DELTAS_TYPE,
    format: CHANNEL_FORMAT,
    channel,
    urlPrefix,
    timestamp,
    keyVersion,
    bundle,
    deltas,
  });
}

export function releaseBytes(release: Release): Uint8Array {
  const { channel, urlPrefix, scope, destinations, timestamp, keyVersion, bundle } = release;
  return encode({
    type: RELEASE_TYPE,
    format: CHANNEL_FORMAT,
    channel,
    urlPrefix,
    scope,
    destinations,
    timestamp,
    keyVersion,
    bundle,
  });
}

const isCount = (v: unknown, min = 0): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= min;

function parseObject(
  bytes: Uint8Array,
  type: string,
  fields: string[],
  what: string,
): Record<string, unknown> {
  const fail = (why: string): never => {
    throw new ChannelError('invalid-release', `${what}: ${why}`);
  };
  if (bytes.byteLength > MAX_SIGNED_DOCUMENT_BYTES)
    fail(`larger than ${MAX_SIGNED_DOCUMENT_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    return fail(`not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail('not a JSON object');
  const obj = value as Record<string, unknown>;
  if (obj.type !== type) fail(`"type" is ${JSON.stringify(obj.type)}, expected "${type}"`);
  if (obj.format !== CHANNEL_FORMAT)
    fail(
      `format ${JSON.stringify(obj.format)} is not supported (this client reads format ${CHANNEL_FORMAT})`,
    );
  for (const key of Object.keys(obj)) if (!fields.includes(key)) fail(`unknown field "${key}"`);
  if (typeof obj.channel !== 'string' || typeof obj.urlPrefix !== 'string')
    fail('"channel" and "urlPrefix" must be strings');
  return obj;
}

/** Parses a key certificate. Call only on bytes whose root signature has verified. */
export function parseKeyCertificate(bytes: Uint8Array, what = 'key certificate'): KeyCertificate {
  const obj = parseObject(
    bytes,
    KEY_TYPE,
    ['type', 'format', 'channel', 'urlPrefix', 'version', 'key'],
    what,
  );
  if (!isCount(obj.version, 1))
    throw new ChannelError('invalid-release', `${what}: "version" must be a whole number from 1`);
  let key: JsonWebKey;
  try {
    key = checkPublicJwk(obj.key);
  } catch (err) {
    throw new ChannelError(
      'invalid-key',
      `${what}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return {
    channel: obj.channel as string,
    urlPrefix: obj.urlPrefix as string,
    version: obj.version,
    key,
  };
}

/** A release's fields, the only ones it may have. */
const RELEASE_FIELDS = [
  'type',
  'format',
  'channel',
  'urlPrefix',
  'scope',
  'destinations',
  'timestamp',
  'keyVersion',
  'bundle',
];

/**
 * The key version a release claims, read before its signature can be checked (it says which
 * certificate to verify it with). Everything else is read only after verification.
 */
export function claimedKeyVersion(bytes: Uint8Array): number {
  const obj = parseObject(bytes, RELEASE_TYPE, RELEASE_FIELDS, 'release');
  if (!isCount(obj.keyVersion, 1))
    throw new ChannelError(
      'invalid-release',
      'release: "keyVersion" must be a whole number from 1',
    );
  return obj.keyVersion;
}

/** Parses a release. Call only on bytes whose signature has verified. */
export function parseRelease(bytes: Uint8Array): Release {
  const fail = (why: string): never => {
    throw new ChannelError('invalid-release', `release: ${why}`);
  };
  const obj = parseObject(bytes, RELEASE_TYPE, RELEASE_FIELDS, 'release');
  if (typeof obj.scope !== 'string') fail('"scope" must be a string');
  if (!Array.isArray(obj.destinations) || !obj.destinations.every((d) => typeof d === 'string'))
    fail('"destinations" must be a list of host names');
  if (!isCount(obj.timestamp, 1)) fail('"timestamp" must be unix seconds');
  if (!isCount(obj.keyVersion, 1)) fail('"keyVersion" must be a whole number from 1');
  const b = obj.bundle as Record<string, unknown> | null;
  if (typeof b !== 'object' || b === null || Object.keys(b).sort().join() !== 'bytes,file,sha256')
    fail('"bundle" must have exactly "file", "bytes" and "sha256"');
  const bundle = b as Record<string, unknown>;
  if (
    typeof bundle.file !== 'string' ||
    !isCount(bundle.bytes, 1) ||
    typeof bundle.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(bundle.sha256)
  )
    fail('"bundle" has a bad file name, length or SHA-256');
  return {
    channel: obj.channel as string,
    urlPrefix: obj.urlPrefix as string,
    scope: obj.scope as string,
    destinations: [...(obj.destinations as string[])],
    timestamp: obj.timestamp as number,
    keyVersion: obj.keyVersion as number,
    bundle: {
      file: bundle.file as string,
      bytes: bundle.bytes as number,
      sha256: bundle.sha256 as string,
    },
  };
}

const isSha256 = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);

/** Parses a delta index. Call only on bytes whose signature has verified. */
export function parseDeltaIndex(bytes: Uint8Array): DeltaIndex {
  const fail = (why: string): never => {
    throw new ChannelError('bad-delta', `delta index: ${why}`);
  };
  let obj: Record<string, unknown>;
  try {
    obj = parseObject(
      bytes,
      DELTAS_TYPE,
      ['type', 'format', 'channel', 'urlPrefix', 'timestamp', 'keyVersion', 'bundle', 'deltas'],
      'delta index',
    );
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
  if (!isCount(obj.timestamp, 1)) fail('"timestamp" must be unix seconds');
  if (!isCount(obj.keyVersion, 1)) fail('"keyVersion" must be a whole number from 1');
  const b = obj.bundle as Record<string, unknown> | null;
  if (
    typeof b !== 'object' ||
    b === null ||
    Object.keys(b).sort().join() !== 'bytes,file,sha256' ||
    typeof b.file !== 'string' ||
    !isCount(b.bytes, 1) ||
    !isSha256(b.sha256)
  )
    fail('"bundle" must have exactly "file", "bytes" and "sha256"');
  if (!Array.isArray(obj.deltas) || obj.deltas.length > MAX_DELTAS)
    fail(`"deltas" must be a list of at most ${MAX_DELTAS}`);
  const deltas = (obj.deltas as unknown[]).map((d, i): DeltaEntry => {
    const e = d as Record<string, unknown> | null;
    if (
      typeof e !== 'object' ||
      e === null ||
      Object.keys(e).sort().join() !== 'bytes,file,from,fromSha256,sha256'
    )
      fail(`delta ${i} must have exactly "from", "fromSha256", "file", "bytes" and "sha256"`);
    const entry = e as Record<string, unknown>;
    if (
      !isCount(entry.from, 1) ||
      !isSha256(entry.fromSha256) ||
      typeof entry.file !== 'string' ||
      !isCount(entry.bytes, 1) ||
      !isSha256(entry.sha256)
    )
      fail(`delta ${i} has a bad timestamp, file name, length or SHA-256`);
    return {
      from: entry.from as number,
      fromSha256: entry.fromSha256 as string,
      file: entry.file as string,
      bytes: entry.bytes as number,
      sha256: entry.sha256 as string,
    };
  });
  const bundle = obj.bundle as Record<string, unknown>;
  return {
    channel: obj.channel as string,
    urlPrefix: obj.urlPrefix as string,
    timestamp: obj.timestamp as number,
    keyVersion: obj.keyVersion as number,
    bundle: {
      file: bundle.file as string,
      bytes: bundle.bytes as number,
      sha256: bundle.sha256 as string,
    },
    deltas,
  };
}

/** A delta index counts only for the release it was signed with: same channel, timestamp, key and bundle. */
export function checkDeltaIndexBinding(index: DeltaIndex, release: Release): void {
  const same =
    index.channel === release.channel &&
    index.urlPrefix === release.urlPrefix &&
    index.timestamp === release.timestamp &&
    index.keyVersion === release.keyVersion &&
    JSON.stringify(index.bundle) === JSON.stringify(release.bundle);
  if (!same) throw new ChannelError('bad-delta', 'the delta index was signed for another release');
}

function expectSame(
  what: string,
  signed: unknown,
  expected: unknown,
  code: 'wrong-channel' | 'timestamp-mismatch' = 'wrong-channel',
): void {
  if (JSON.stringify(signed) !== JSON.stringify(expected)) {
    throw new ChannelError(
      code,
      `signed ${what} is ${JSON.stringify(signed)}, but this channel's is ${JSON.stringify(expected)}; refusing a file made for another channel (mix-and-match)`,
    );
  }
}

/** A certificate applies only to the channel (name and URL prefix) and the version asked for. */
export function checkCertificateBinding(
  cert: KeyCertificate,
  def: ChannelDefinition,
  version: number,
): void {
  expectSame('channel name of the key certificate', cert.channel, def.name);
  expectSame('URL prefix of the key certificate', cert.urlPrefix, def.urlPrefix);
  if (cert.version !== version)
    throw new ChannelError(
      'invalid-release',
      `key certificate ${version} says it is version ${cert.version}`,
    );
}

/** Every binding field of a release, checked one by one so the error says which differs. */
export function checkReleaseBinding(
  release: Release,
  def: ChannelDefinition,
  advertised: number,
  keyVersion: number,
): void {
  expectSame('channel name', release.channel, def.name);
  expectSame('URL prefix', release.urlPrefix, def.urlPrefix);
  expectSame('scope', release.scope, def.scope);
  expectSame('destination list', release.destinations, def.destinations);
  if (release.timestamp !== advertised) {
    throw new ChannelError(
      'timestamp-mismatch',
      `signed release is dated ${release.timestamp} (${formatTimestamp(release.timestamp)}) but was published as ${advertised}; possible downgrade attack`,
    );
  }
  if (release.keyVersion !== keyVersion)
    throw new ChannelError(
      'invalid-release',
      `release claims key version ${keyVersion} outside its signature but ${release.keyVersion} inside`,
    );
  if (release.bundle.file !== bundleFileName(advertised))
    throw new ChannelError(
      'invalid-release',
      `release names bundle ${JSON.stringify(release.bundle.file)}, expected ${bundleFileName(advertised)}`,
    );
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest(
      'SHA-256',
      bytes.buffer instanceof ArrayBuffer
        ? (bytes as Uint8Array<ArrayBuffer>)
        : new Uint8Array(bytes),
    ),
  );
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}
