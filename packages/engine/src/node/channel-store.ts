import { createHash } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { channelDefinitionJson, parseChannelDefinition } from '../channels/definition.js';
import { checkPublicJwk } from '../channels/signature.js';
import { ChannelError } from '../channels/errors.js';
import { type ActiveChannels, selectActiveChannels } from '../channels/installed.js';
import type {
  ChannelRecord,
  ChannelStorage,
  LastCheck,
  RootFloor,
  SigningKeyRecord,
} from '../channels/state.js';
import { decodeUtf8 } from '../library/utf8.js';
import { readRegularFile } from './read-file.js';
import { writeFileAtomic } from './write-file-atomic.js';

/**
 * Installed channel state on disk:
 *
 *   <stateDir>/channels/<slug>-<hash>/record.json        the record; replaced by rename
 *   <stateDir>/channels/<slug>-<hash>/bundle.<ts>.bin    decompressed verified bundle, immutable
 *
 * A new bundle file is written first and `record.json` is renamed over the old one last, so
 * the switch to a new bundle is one atomic rename; a crash in between leaves the old record
 * (and its still-present bundle) active.
 */
const RECORD_FILE = 'record.json';
/** 2: installed bundles carry their key version and binding; the newest signing key is kept. */
const RECORD_FORMAT = 2;

/** `$XDG_STATE_HOME/httpsify`, else `~/.local/state/httpsify`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  // The XDG spec says relative values are invalid and must be ignored.
  const base = xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.local', 'state');
  return join(base, 'httpsify');
}

/** Directory name for a channel: readable, and unique even when names differ only in unsafe characters. */
export function channelDirName(name: string): string {
  const slug = name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 40);
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${slug}-${hash}`;
}

export function channelStateDir(stateDir: string, name: string): string {
  return join(stateDir, 'channels', channelDirName(name));
}

interface RecordFile {
  format: number;
  channel: unknown;
  installed?: {
    timestamp: number;
    rulesetCount: number;
    installedAt: number;
    keyVersion: number;
    verifiedFor: string;
    file: string;
    bytes: number;
    sha256: string;
  };
  signingKey?: SigningKeyRecord;
  floor?: RootFloor;
  lastCheck?: LastCheck;
  lastSuccessAt?: number;
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const isCount = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function parseRecordFile(text: string, path: string): RecordFile {
  const corrupt = (why: string): never => {
    throw new ChannelError(
      'storage-failed',
      `${path}: ${why}; remove the channel's state (httpsify update --remove NAME) to start over`,
    );
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return corrupt(`not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof value !== 'object' || value === null) return corrupt('not a JSON object');
  const file = value as RecordFile;
  if (file.format !== RECORD_FORMAT)
    corrupt(`state format ${JSON.stringify(file.format)} is not this version's (${RECORD_FORMAT})`);
  const inst = file.installed;
  if (inst !== undefined) {
    const ok =
      typeof inst === 'object' &&
      inst !== null &&
      isCount(inst.timestamp) &&
      isCount(inst.rulesetCount) &&
      isCount(inst.installedAt) &&
      isCount(inst.bytes) &&
      isCount(inst.keyVersion) &&
      typeof inst.verifiedFor === 'string' &&
      typeof inst.sha256 === 'string' &&
      typeof inst.file === 'string' &&
      /^bundle\.[0-9]+\.bin$/.test(inst.file);
    if (!ok) corrupt('malformed "installed" entry');
  }
  const key = file.signingKey;
  if (
    key !== undefined &&
    (typeof key !== 'object' ||
      key === null ||
      !isCount(key.version) ||
      typeof key.verifiedFor !== 'string' ||
      typeof key.key !== 'object' ||
      key.key === null)
  ) {
    corrupt('malformed "signingKey" entry');
  }
  const floor = file.floor;
  if (
    floor !== undefined &&
    (typeof floor !== 'object' ||
      floor === null ||
      typeof floor.root !== 'string' ||
      !isCount(floor.keyVersion) ||
      !isCount(floor.timestamp))
  ) {
    corrupt('malformed "floor" entry');
  }
  return file;
}

/** A record holds a channel definition, a key and a few counters: kilobytes, never megabytes. */
const RECORD_MAX_BYTES = 1024 * 1024;

/** A record file's text, through the one door for files read as rulesets (read-file.ts). */
const readRecordText = (path: string): string =>
  decodeUtf8(readRegularFile(path, RECORD_MAX_BYTES));

async function readRecord(dir: string): Promise<ChannelRecord | undefined> {
  const path = join(dir, RECORD_FILE);
  let text: string;
  try {
    text = readRecordText(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ChannelError('storage-failed', `${path}: ${(err as Error).message}`, { cause: err });
  }
  const file = parseRecordFile(text, path);
  const record: ChannelRecord = { channel: parseChannelDefinition(file.channel, path) };
  if (file.lastCheck !== undefined) record.lastCheck = file.lastCheck;
  if (file.lastSuccessAt !== undefined) record.lastSuccessAt = file.lastSuccessAt;
  if (file.floor !== undefined)
    record.floor = {
      root: file.floor.root,
      keyVersion: file.floor.keyVersion,
      timestamp: file.floor.timestamp,
    };
  if (file.signingKey !== undefined) {
    try {
      record.signingKey = {
        version: file.signingKey.version,
        key: checkPublicJwk(file.signingKey.key),
        verifiedFor: file.signingKey.verifiedFor,
      };
    } catch (err) {
      throw new ChannelError(
        'storage-failed',
        `${path}: stored signing key: ${(err as Error).message}`,
      );
    }
  }
  if (file.installed) {
    const bundlePath = join(dir, file.installed.file);
    let bytes: Uint8Array;
    try {
      // Never more than the record says it holds: a longer file is damaged whatever it is.
      bytes = new Uint8Array(readRegularFile(bundlePath, file.installed.bytes));
    } catch (err) {
      throw new ChannelError(
        'storage-failed',
        `${bundlePath}: installed bundle unreadable (${(err as Error).message})`,
        { cause: err },
      );
    }
    // The bundle was verified when it was downloaded; this only catches local damage.
    if (bytes.byteLength !== file.installed.bytes || sha256Hex(bytes) !== file.installed.sha256) {
      throw new ChannelError(
        'storage-failed',
        `${bundlePath}: installed bundle was modified or damaged on disk; remove the channel's state (httpsify update --remove NAME) to reinstall`,
      );
    }
    const { timestamp, rulesetCount, installedAt, keyVersion, verifiedFor } = file.installed;
    record.installed = {
      timestamp,
      rulesetCount,
      installedAt,
      keyVersion,
      verifiedFor,
      bundle: bytes,
    };
  }
  return record;
}

async function writeRecord(dir: string, record: ChannelRecord): Promise<void> {
  await mkdir(dir, { recursive: true });
  const file: RecordFile = {
    format: RECORD_FORMAT,
    channel: channelDefinitionJson(record.channel),
  };
  if (record.installed) {
    const { timestamp, rulesetCount, installedAt, keyVersion, verifiedFor, bundle } =
      record.installed;
    const name = `bundle.${timestamp}.bin`;
    const sha256 = sha256Hex(bundle);
    // Re-saving the same installed bundle (a status-only save) must not rewrite it.
    let existing: Buffer | undefined;
    try {
      existing = readRegularFile(join(dir, name), bundle.byteLength);
    } catch {
      existing = undefined;
    }
    if (!existing || existing.byteLength !== bundle.byteLength || sha256Hex(existing) !== sha256) {
      await writeFileAtomic(join(dir, name), bundle);
    }
    file.installed = {
      timestamp,
      rulesetCount,
      installedAt,
      keyVersion,
      verifiedFor,
      file: name,
      bytes: bundle.byteLength,
      sha256,
    };
  }
  if (record.signingKey) file.signingKey = record.signingKey;
  if (record.floor) file.floor = record.floor;
  if (record.lastCheck) file.lastCheck = record.lastCheck;
  if (record.lastSuccessAt !== undefined) file.lastSuccessAt = record.lastSuccessAt;
  await writeFileAtomic(join(dir, RECORD_FILE), `${JSON.stringify(file, null, 2)}\n`);
  // Bundles no longer referenced are garbage only after the rename above succeeded.
  await removeUnreferenced(dir, file.installed?.file);
}

const TEMP_FILE = /\.tmp-[0-9]+-[0-9a-f]+$/;
const BUNDLE_FILE = /^bundle\.[0-9]+\.bin$/;

async function removeUnreferenced(
  dir: string,
  keep: string | undefined,
  removed: string[] = [],
): Promise<string[]> {
  for (const entry of await readdir(dir)) {
    if ((BUNDLE_FILE.test(entry) && entry !== keep) || TEMP_FILE.test(entry)) {
      await rm(join(dir, entry), { force: true });
      removed.push(join(dir, entry));
    }
  }
  return removed;
}

/**
 * Removes what killed runs left behind: temp files of atomic writes never renamed, and bundle
 * files no record refers to. Call only while holding the state lock (withStateLock), when no
 * other writer can be between writing a file and renaming it. A channel whose record cannot be
 * read keeps its bundle files (they may be all that is left to diagnose).
 */
export async function removeChannelLeftovers(stateDir: string): Promise<string[]> {
  const root = join(stateDir, 'channels');
  let dirs: string[];
  try {
    dirs = (await readdir(root, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => join(root, e.name));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const dir of dirs) {
    let keep: string | undefined;
    try {
      const text = readRecordText(join(dir, RECORD_FILE));
      keep = parseRecordFile(text, join(dir, RECORD_FILE)).installed?.file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        for (const entry of await readdir(dir))
          if (TEMP_FILE.test(entry)) await rm(join(dir, entry), { force: true });
        continue;
      }
    }
    await removeUnreferenced(dir, keep, removed);
  }
  return removed;
}

/** A {@link ChannelStorage} keeping one channel's record under `stateDir`. */
export function fileChannelStorage(stateDir: string, channelName: string): ChannelStorage {
  const dir = channelStateDir(stateDir, channelName);
  return {
    load: () => readRecord(dir),
    save: (record) => {
      if (record.channel.name !== channelName)
        throw new ChannelError(
          'storage-failed',
          `record for "${record.channel.name}" saved as "${channelName}"`,
        );
      return writeRecord(dir, record);
    },
  };
}

export interface ChannelRecordsOnDisk {
  /** Records sorted by channel name (so precedence between channels is stable). */
  records: ChannelRecord[];
  /** One message per channel whose state could not be read; those channels are skipped. */
  problems: string[];
}

/** Every channel record under `stateDir`. A missing state directory means no channels. */
export async function readChannelRecords(stateDir: string): Promise<ChannelRecordsOnDisk> {
  const root = join(stateDir, 'channels');
  let entries: string[];
  try {
    entries = (await readdir(root, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], problems: [] };
    throw err;
  }
  const records: ChannelRecord[] = [];
  const problems: string[] = [];
  for (const entry of entries.sort()) {
    try {
      const record = await readRecord(join(root, entry));
      if (record) records.push(record);
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  records.sort((a, b) =>
    a.channel.name < b.channel.name ? -1 : a.channel.name > b.channel.name ? 1 : 0,
  );
  return { records, problems };
}

/**
 * What `httpsify rewrite` needs: the verified bundles of installed channels with their scopes,
 * and whether the built-in defaults still apply. Unreadable channel state is skipped and
 * reported in `problems`, never fatal.
 */
export async function loadInstalledChannels(
  stateDir: string,
  options: { defaultsTimestamp?: number } = {},
): Promise<ActiveChannels & { problems: string[] }> {
  const { records, problems } = await readChannelRecords(stateDir);
  return { ...selectActiveChannels(records, options.defaultsTimestamp), problems };
}

/** Deletes a channel's installed state. Returns false when there was none. */
export async function removeChannelState(stateDir: string, name: string): Promise<boolean> {
  const dir = channelStateDir(stateDir, name);
  try {
    await readdir(dir);
  } catch {
    return false;
  }
  await rm(dir, { recursive: true, force: true });
  return true;
}
