/**
 * The background half of "Import a ruleset library". The page unpacks a folder or archive and
 * sends the XML files in batches; this is the door: each file is counted against the limits
 * again (name, size, number), then every file is parsed and every pattern judged here
 * (library-compile.ts), the bundle stored, and the new engine handed to the layers. An import
 * that fails changes nothing: the library in use stays until the new one is stored.
 */
import {
  EntryCollector,
  type FileProblem,
  LIBRARY_LIMITS,
  LibraryRefused,
  type Limits,
} from './archive-entries.js';
import { compileBundle } from '@httpsify/engine';
import {
  compileLibrary,
  type CompiledLibrary,
  type LibraryProgress,
  MAX_PROBLEMS,
} from './library-compile.js';
import { flagged, previewLibrary } from './library-preview.js';
import type { LibraryRequest, LibraryStatus } from './library-protocol.js';
import {
  type LibraryInfo,
  type LoadedLibrary,
  loadLibrary,
  readLibraryInfo,
  removeLibrary,
  saveLibrary,
} from './library-store.js';
import type { StorageArea } from '../platform/browser-api.js';

export interface LibraryServiceDeps {
  area: StorageArea;
  /** The library to layer (null: none, or switched off); the controller rebuilds its layers. */
  apply(library: LoadedLibrary | null): Promise<void>;
  /** Chromium: why the library's browser rules are partial or missing. */
  platformProblem(): Promise<string | null>;
  /** Chromium: the library's rulesets whose page loads alone its browser rules send to the engine. */
  pageLoadsOnly?(): Promise<string[]>;
  /** The bundled (default) rulesets whose targets cover a host, for the import's preview. */
  bundledNamesForHost?(host: string): string[];
  now?: () => number;
  limits?: Limits;
}

interface Upload {
  name: string;
  collector: EntryCollector;
  bytes: number;
}

export class LibraryService {
  private uploads = new Map<number, Upload>();
  /** The compiled import the page is previewing (one at a time), until applied or dropped. */
  private pending: {
    upload: number;
    u: Upload;
    compiled: CompiledLibrary;
    importedAt: number;
  } | null = null;
  private nextUpload = 1;
  private loadProblem: string | null = null;
  /** Imports, switches and removals run one after the other. */
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: LibraryServiceDeps) {}

  /** Loads the stored library at startup (or after another window changed it). */
  async start(): Promise<void> {
    await this.serial(() => this.reload());
  }

  private async reload(): Promise<void> {
    const { library, problem } = await loadLibrary(this.deps.area);
    this.loadProblem = problem;
    await this.deps.apply(library !== null && library.info.enabled ? library : null);
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.running.then(task);
    this.running = run.catch(() => undefined);
    return run;
  }

  async status(): Promise<LibraryStatus> {
    const info = await readLibraryInfo(this.deps.area);
    const enabled = info?.enabled === true;
    return {
      info,
      problem: this.loadProblem,
      platformProblem: enabled ? await this.deps.platformProblem() : null,
      pageLoadsOnly: enabled ? ((await this.deps.pageLoadsOnly?.()) ?? []) : [],
    };
  }

  async handle(req: LibraryRequest, progress: (p: LibraryProgress) => void): Promise<unknown> {
    switch (req.type) {
      case 'libraryBegin': {
        if (typeof req.name !== 'string') return { error: 'invalid-request' };
        // One import at a time: a new one drops any unfinished upload.
        this.uploads.clear();
        const collector = new EntryCollector(this.deps.limits ?? LIBRARY_LIMITS);
        const problems = Array.isArray(req.problems)
          ? req.problems.slice(0, MAX_PROBLEMS).filter(isProblem)
          : [];
        collector.contents.problems.push(...problems);
        collector.contents.skipped =
          Number.isSafeInteger(req.skipped) && req.skipped >= 0 ? req.skipped : 0;
        const upload = this.nextUpload++;
        this.uploads.set(upload, { name: req.name.slice(0, 200), collector, bytes: 0 });
        return { upload };
      }
      case 'libraryFiles': {
        const u = this.uploads.get(req.upload);
        if (u === undefined) return { error: 'this import was interrupted; start it again' };
        if (!Array.isArray(req.files)) return { error: 'invalid-request' };
        try {
          for (const f of req.files) {
            if (
              typeof f !== 'object' ||
              f === null ||
              typeof f.path !== 'string' ||
              typeof f.text !== 'string'
            )
              return { error: 'invalid-request' };
            // Counted in characters: the page counted bytes while unpacking; this bounds what it sends.
            const path = u.collector.admit(f.path, f.text.length);
            if (path !== null) u.collector.contents.files.push({ path, text: f.text });
          }
        } catch (e) {
          this.uploads.delete(req.upload);
          if (e instanceof LibraryRefused) return { error: e.message };
          throw e;
        }
        return { received: u.collector.contents.files.length };
      }
      case 'libraryFinish': {
        const u = this.uploads.get(req.upload);
        if (u === undefined) return { error: 'this import was interrupted; start it again' };
        this.uploads.delete(req.upload);
        return this.serial(() => this.finish(req.upload, u, progress));
      }
      case 'libraryApply': {
        const pending = this.pending;
        if (pending === null || pending.upload !== req.upload)
          return { error: 'this import was interrupted; start it again' };
        this.pending = null;
        return this.serial(() => this.apply(pending, req.withoutCrossSite === true, progress));
      }
      case 'libraryDiscard':
        if (this.pending?.upload === req.upload) this.pending = null;
        return { ok: true };
      case 'libraryHold':
        return { held: this.pending !== null && this.pending.upload === req.upload };
      case 'libraryStatus':
        return this.status();
      case 'librarySetEnabled':
        return this.serial(async () => {
          const info = await readLibraryInfo(this.deps.area);
          if (info === null) return { error: 'there is no library to switch' };
          await this.deps.area.set({ localLibrary: { ...info, enabled: req.enabled === true } });
          await this.reload();
          return this.status();
        });
      case 'libraryRemove':
        return this.serial(async () => {
          await removeLibrary(this.deps.area);
          await this.reload();
          return this.status();
        });
      default:
        return { error: 'unknown request' };
    }
  }

  private async finish(
    upload: number,
    u: Upload,
    progress: (p: LibraryProgress) => void,
  ): Promise<unknown> {
    const contents = u.collector.contents;
    if (contents.files.length === 0)
      return {
        error: 'no ruleset files (.xml) were found in it',
        problems: contents.problems.slice(0, 50),
      };
    const importedAt = (this.deps.now ?? Date.now)();
    // The bundle's timestamp tells imports apart (Chromium's rules are rebuilt when it changes).
    const compiled = await compileLibrary(contents.files, progress, importedAt);
    if (compiled.rulesetCount === 0)
      return {
        error: 'none of its files holds a ruleset that can be used',
        problems: compiled.problems.slice(0, 50),
      };
    // Nothing is stored until the user has seen what it changes.
    this.pending = { upload, u, compiled, importedAt };
    return {
      preview: previewLibrary(
        compiled.rulesets,
        (host) => this.deps.bundledNamesForHost?.(host) ?? [],
      ),
    };
  }

  private async apply(
    pending: { u: Upload; compiled: CompiledLibrary; importedAt: number },
    withoutCrossSite: boolean,
    progress: (p: LibraryProgress) => void,
  ): Promise<unknown> {
    const { u, importedAt } = pending;
    const contents = u.collector.contents;
    let compiled = pending.compiled;
    if (withoutCrossSite) {
      const kept = compiled.rulesets.filter((r) => {
        const f = flagged(r);
        return f.crossSite === null && f.toHttp === null;
      });
      if (kept.length === 0)
        return {
          error: 'every ruleset in it sends visits to other sites or to HTTP; nothing was imported',
        };
      compiled = {
        ...compiled,
        rulesets: kept,
        rulesetCount: kept.length,
        bundle: compileBundle(kept, { timestamp: importedAt }),
      };
    }
    const all: FileProblem[] = [...contents.problems, ...compiled.problems];
    const info: LibraryInfo = {
      name: u.name,
      fileCount: compiled.fileCount,
      rulesetCount: compiled.rulesetCount,
      skipped: contents.skipped,
      importedAt,
      enabled: true,
      problems: all.slice(0, MAX_PROBLEMS),
      moreProblems: compiled.moreProblems + Math.max(0, all.length - MAX_PROBLEMS),
    };
    progress({ stage: 'store', done: 0, total: 1 });
    await saveLibrary(this.deps.area, info, compiled.bundle);
    await this.reload();
    progress({ stage: 'store', done: 1, total: 1 });
    return this.status();
  }
}

function isProblem(p: unknown): p is FileProblem {
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof (p as FileProblem).file === 'string' &&
    typeof (p as FileProblem).message === 'string' &&
    typeof (p as FileProblem).line === 'number'
  );
}
