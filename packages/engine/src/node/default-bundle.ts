import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { compileBundle } from '../bundle/write.js';
import { Engine } from '../match/engine.js';
import {
  defaultRulesetsDir,
  listRulesetFiles,
  loadRulesets,
  type LoadedRulesets,
  type LoadOptions,
} from './load-rulesets.js';

/**
 * The bundled default rulesets, compiled when the package is built (`npm run build`), so that a
 * one-shot `httpsify rewrite URL` reads one bundle instead of parsing and compiling XML. The
 * manifest beside it holds two checksums: of the bundle's bytes (a damaged file is not used) and
 * of the XML it was built from (a bundle older than the rulesets/ folder is not used). Either
 * mismatch, or no prebuilt bundle at all, falls back to compiling the XML, as before.
 */
interface DefaultBundleManifest {
  /** sha256 of the XML sources (file names, bytes and TIMESTAMP), see sourcesFingerprint. */
  sources: string;
  /** sha256 of the bundle file. */
  bundle: string;
}

const MANIFEST_FILE = 'default-bundle.json';
const BUNDLE_FILE = 'default.bundle';

/** Where the default rulesets and their prebuilt bundle live (tests point it elsewhere). */
export interface DefaultsLocation {
  /** The XML folder (default: defaultRulesetsDir()). */
  rulesets: string;
  /** The folder of the bundle and its manifest (default: dist/defaults of the package). */
  bundle: string;
}

/** dist/defaults of @httpsify/engine, found from the package root as defaultRulesetsDir is. */
function defaultBundleDir(): string {
  return resolve(
    dirname(createRequire(import.meta.url).resolve('@httpsify/engine/package.json')),
    'dist',
    'defaults',
  );
}

function defaultsLocation(): DefaultsLocation {
  return { rulesets: defaultRulesetsDir(), bundle: defaultBundleDir() };
}

const sha256 = (bytes: Uint8Array | string): string =>
  createHash('sha256').update(bytes).digest('hex');

/** A fingerprint of the default rulesets folder: every `*.xml` file's name and bytes, and TIMESTAMP. */
function sourcesFingerprint(dir: string): string {
  const hash = createHash('sha256');
  hash.update(readFileSync(join(dir, 'TIMESTAMP')));
  for (const file of listRulesetFiles(dir)) {
    const bytes = readFileSync(file);
    hash.update(`\0${basename(file)}\0${bytes.length}\0`).update(bytes);
  }
  return hash.digest('hex');
}

/**
 * Compiles the default rulesets into dist/defaults (called by the build). Every pattern is
 * judged here and the verdicts are stored, as for the extension's packaged defaults. Refuses
 * (throws) when a default ruleset is broken: the defaults must load whole.
 */
export function writeDefaultBundle(where: DefaultsLocation = defaultsLocation()): string {
  const dir = where.rulesets;
  const timestamp = Number(readFileSync(join(dir, 'TIMESTAMP'), 'utf8').trim());
  const loaded = loadRulesets([dir], { checkRegexes: true, timestamp });
  const problems = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (problems.length > 0)
    throw new Error(
      `the default rulesets do not load: ${problems.map((d) => `${d.file}:${d.line}: ${d.message}`).join('; ')}`,
    );
  const bundle = compileBundle(loaded.rulesets, { timestamp, regexVerdicts: true });
  const out = where.bundle;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, BUNDLE_FILE), bundle);
  const manifest: DefaultBundleManifest = {
    sources: sourcesFingerprint(dir),
    bundle: sha256(bundle),
  };
  writeFileSync(join(out, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return join(out, BUNDLE_FILE);
}

/**
 * The default rulesets from the prebuilt bundle, or null when there is none or either checksum
 * does not match (the caller then compiles the XML). Its regex verdicts were worked out by our
 * own build from our own rulesets, and are trusted as the extension trusts its packaged bundle.
 */
export function loadPrebuiltDefaults(
  options: Omit<LoadOptions, 'checkRegexes' | 'timestamp'> = {},
  where: DefaultsLocation = defaultsLocation(),
): LoadedRulesets | null {
  let bundle: Uint8Array;
  let manifest: DefaultBundleManifest;
  try {
    const out = where.bundle;
    manifest = JSON.parse(readFileSync(join(out, MANIFEST_FILE), 'utf8')) as DefaultBundleManifest;
    const bytes = readFileSync(join(out, BUNDLE_FILE));
    bundle = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch {
    return null;
  }
  if (sha256(bundle) !== manifest.bundle || sourcesFingerprint(where.rulesets) !== manifest.sources)
    return null;
  const engine = new Engine(bundle, {
    ...options,
    verify: 'trusted',
    trustBundledRegexVerdicts: true,
  });
  return { engine, bundle, rulesets: [], diagnostics: [] };
}
