/**
 * The folder graph of a source tree, read from its relative imports with the TypeScript
 * compiler's own pre-processor (static, type-only and dynamic imports, re-exports). The layering
 * tests hold it against a declared order; run alone it prints the arrows and cycles:
 *
 *   npx tsx scripts/import-graph.ts packages/extension/src [--ui-pages]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import that crosses from one folder to another. */
export interface FolderArrow {
  from: string;
  to: string;
  /** The importing file, relative to the root. */
  file: string;
  specifier: string;
}

/** Maps a file (relative to the root, `/`-separated) to the folder it belongs to. */
export type FolderOf = (file: string) => string;

/** The first path segment: `dnr/rules.ts` is in `dnr` (a file at the root is in `.`). */
export const topFolder: FolderOf = (file) =>
  file.includes('/') ? file.slice(0, file.indexOf('/')) : '.';

/** As `topFolder`, but each page of `ui/` (and `ui/shared`) is a folder of its own. */
export const uiPageFolder: FolderOf = (file) => {
  const parts = file.split('/');
  return parts[0] === 'ui' && parts.length > 2 ? `ui/${parts[1]}` : topFolder(file);
};

export function sourceFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(path);
    }
  };
  walk(root);
  return files.sort();
}

/** Every import of `root`'s files that lands in another folder of `root`. */
export function folderArrows(root: string, folderOf: FolderOf = topFolder): FolderArrow[] {
  const arrows: FolderArrow[] = [];
  const absRoot = resolve(root);
  for (const path of sourceFiles(absRoot)) {
    const file = relative(absRoot, path).split(sep).join('/');
    const info = ts.preProcessFile(readFileSync(path, 'utf8'), true, true);
    for (const { fileName: specifier } of info.importedFiles) {
      if (!specifier.startsWith('.')) continue;
      const target = relative(absRoot, resolve(dirname(path), specifier))
        .split(sep)
        .join('/');
      if (target.startsWith('..')) continue;
      const from = folderOf(file);
      const to = folderOf(target);
      if (from !== to) arrows.push({ from, to, file, specifier });
    }
  }
  return arrows;
}

/** The folder cycles: each strongly connected set of two or more folders (Tarjan). */
export function folderCycles(arrows: readonly FolderArrow[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const a of arrows) {
    if (!next.has(a.from)) next.set(a.from, new Set());
    if (!next.has(a.to)) next.set(a.to, new Set());
    next.get(a.from)!.add(a.to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const set: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        set.push(w);
      } while (w !== v);
      if (set.length > 1) cycles.push(set.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}

/** The distinct folder-to-folder arrows, as `from -> to`. */
export function distinctArrows(arrows: readonly FolderArrow[]): string[] {
  return [...new Set(arrows.map((a) => `${a.from} -> ${a.to}`))].sort();
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const root = process.argv[2] ?? '.';
  const arrows = folderArrows(root, process.argv.includes('--ui-pages') ? uiPageFolder : topFolder);
  const distinct = distinctArrows(arrows);
  for (const line of distinct) console.log(line);
  const cycles = folderCycles(arrows);
  console.log(`${distinct.length} folder arrows, ${cycles.length} cycle(s)`);
  for (const c of cycles) console.log(`cycle of ${c.length}: ${c.join(', ')}`);
}
