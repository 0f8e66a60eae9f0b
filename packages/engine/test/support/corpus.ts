import { execFileSync } from 'node:child_process';
import {
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createGunzip } from 'node:zlib';

/** The repository root (this file is packages/engine/test/support/corpus.ts). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
/**
 * The shared corpus lives beside the repository, never inside it; a git worktree elsewhere names
 * it with HTTPSIFY_CORPUS_DIR.
 */
export const corpusDir =
  process.env['HTTPSIFY_CORPUS_DIR'] ?? resolve(repoRoot, '../shared/corpus');
export const corpusTarball = join(corpusDir, 'https-everywhere-rules-2018.tar.gz');
export const oraclePath = join(corpusDir, 'oracle-public.jsonl.gz');

/**
 * Extracts the 2018 ruleset corpus once per machine into the temp directory and returns the
 * directory holding the `*.xml` files. Extraction goes to a scratch folder renamed into place,
 * so concurrent test workers never see a half-extracted tree.
 */
export function corpusRulesDir(): string {
  return libraryRulesDir(2018);
}

/** The same for either library of the shared corpus (2021: EFF's late one, no oracle). */
export function libraryRulesDir(year: 2018 | 2021): string {
  const target = join(tmpdir(), `httpsify-corpus-${year}`);
  const rules = join(target, 'rules');
  if (existsSync(rules)) return rules;
  const scratch = `${target}.${process.pid}.${Date.now()}`;
  mkdirSync(scratch, { recursive: true });
  const tarball = join(corpusDir, `https-everywhere-rules-${year}.tar.gz`);
  execFileSync('tar', ['xzf', tarball, '-C', scratch]);
  try {
    renameSync(scratch, target);
  } catch {
    // Another worker won the race; its copy is complete.
    rmSync(scratch, { recursive: true, force: true });
  }
  return rules;
}

export function corpusXmlFiles(): string[] {
  const dir = corpusRulesDir();
  return readdirSync(dir)
    .filter((f) => f.endsWith('.xml'))
    .sort()
    .map((f) => join(dir, f));
}

/**
 * Every `every`-th ruleset of the corpus (by file name), linked into a directory of its own:
 * real rulesets at a fraction of the cost, for tests of how a whole library is handled.
 */
export function corpusSubsetDir(every: number): string {
  const target = join(tmpdir(), `httpsify-corpus-2018-every-${every}`);
  if (existsSync(target)) return target;
  const scratch = `${target}.${process.pid}.${Date.now()}`;
  mkdirSync(scratch, { recursive: true });
  corpusXmlFiles()
    .filter((_, i) => i % every === 0)
    .forEach((f) => symlinkSync(f, join(scratch, basename(f))));
  try {
    renameSync(scratch, target);
  } catch {
    rmSync(scratch, { recursive: true, force: true });
  }
  return target;
}

export interface OracleCase {
  url: string;
  expected: string | null;
}

export async function readOracle(path = oraclePath): Promise<OracleCase[]> {
  const out: OracleCase[] = [];
  const lines = createInterface({
    input: createReadStream(path).pipe(createGunzip()),
    crlfDelay: Infinity,
  });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    out.push(JSON.parse(line) as OracleCase);
  }
  return out;
}
