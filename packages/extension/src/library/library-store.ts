import { loadBundle, readBundleHeader, type Engine } from '@httpsify/engine';
import { base64ToBytes, bytesToBase64 } from '../channels/base64.js';
import type { FileProblem } from './archive-entries.js';
import type { StorageArea } from '../platform/browser-api.js';

/**
 * The imported ruleset library in storage.local: its description (small, read by the options
 * page) and its compiled bundle (base64, about 4 MB for the whole 2018 corpus; the manifest
 * asks for `unlimitedStorage`) under two keys written in one `set`. Never synced or exported.
 */
export const LIBRARY_INFO_KEY = 'localLibrary';
export const LIBRARY_BUNDLE_KEY = 'localLibraryBundle';

/** The library's name among the layers; channels cannot take it (settings/channel-name.ts). */
export { LIBRARY_LAYER_NAME } from '../settings/channel-name.js';

export interface LibraryInfo {
  /** The folder or archive it came from. */
  name: string;
  fileCount: number;
  rulesetCount: number;
  /** Non-XML entries passed over. */
  skipped: number;
  /** Unix milliseconds. */
  importedAt: number;
  enabled: boolean;
  problems: FileProblem[];
  moreProblems: number;
}

export interface LoadedLibrary {
  info: LibraryInfo;
  engine: Engine;
  timestamp: number;
}

/** Reads the description, as untrusted: a damaged one counts as no library. */
export async function readLibraryInfo(area: StorageArea): Promise<LibraryInfo | null> {
  const v = (await area.get([LIBRARY_INFO_KEY]))[LIBRARY_INFO_KEY];
  return isLibraryInfo(v) ? v : null;
}

/** The stored library with its engine, or why it cannot be used. */
export async function loadLibrary(
  area: StorageArea,
): Promise<{ library: LoadedLibrary | null; problem: string | null }> {
  const info = await readLibraryInfo(area);
  if (info === null) return { library: null, problem: null };
  const raw = (await area.get([LIBRARY_BUNDLE_KEY]))[LIBRARY_BUNDLE_KEY];
  try {
    if (typeof raw !== 'string') throw new Error('the compiled rules are missing');
    const bytes = base64ToBytes(raw);
    // Full verification: storage may have been damaged since the import.
    const engine = loadBundle(bytes);
    return {
      library: { info, engine, timestamp: readBundleHeader(bytes).timestamp },
      problem: null,
    };
  } catch (e) {
    return {
      library: null,
      problem: `the stored library does not load (${e instanceof Error ? e.message : String(e)}); import it again`,
    };
  }
}

export async function saveLibrary(
  area: StorageArea,
  info: LibraryInfo,
  bundle: Uint8Array,
): Promise<void> {
  await area.set({ [LIBRARY_INFO_KEY]: info, [LIBRARY_BUNDLE_KEY]: bytesToBase64(bundle) });
}

export async function removeLibrary(area: StorageArea): Promise<void> {
  await area.remove([LIBRARY_INFO_KEY, LIBRARY_BUNDLE_KEY]);
}

function isLibraryInfo(v: unknown): v is LibraryInfo {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.name === 'string' &&
    typeof o.fileCount === 'number' &&
    typeof o.rulesetCount === 'number' &&
    typeof o.skipped === 'number' &&
    typeof o.importedAt === 'number' &&
    typeof o.enabled === 'boolean' &&
    typeof o.moreProblems === 'number' &&
    Array.isArray(o.problems) &&
    o.problems.every(
      (p) =>
        typeof p === 'object' &&
        p !== null &&
        typeof (p as FileProblem).file === 'string' &&
        typeof (p as FileProblem).message === 'string',
    )
  );
}
