import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileBundle, type Diagnostic, type Ruleset } from '@httpsify/engine';
import { compileDnr, type DnrReport, type DnrRule } from '@httpsify/engine/dnr';
import { defaultRulesetsDir, defaultRulesetsTimestamp, loadRulesets } from '@httpsify/engine/node';
import { build as esbuild } from 'esbuild';
import { handoffScope, type HandoffScope } from '../dnr/handoff-rules.js';
import {
  BACKGROUND_SCRIPT,
  DEFAULT_BUNDLE_PATH,
  HANDOFF_SCOPE_PATH,
  STATIC_RULES_PATH,
} from '../platform/packaged-files.js';
import { manifestFor, type Browser } from './manifest.js';
import { buildUiAssets, uiManifestEntries } from './ui-assets.js';
import { zipDirectory } from './zip.js';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface BuildOptions {
  /** Ruleset directories, XML files or bundles; default: the engine's bundled rulesets. */
  rulesets?: string[];
  /** Output directory; default `packages/extension/build`. */
  outDir?: string;
  browsers?: Browser[];
  zip?: boolean;
  /** Chromium test builds: allow `testMatchOutcome` / `getMatchedRules`. */
  feedback?: boolean;
  version?: string;
  /** Unix seconds to stamp given rulesets with (the defaults carry their own). */
  timestamp?: number;
  /**
   * The test suite's handles on the worker (platform/test-hooks.ts); default: only when
   * HTTPSIFY_TEST_HOOKS=1 (vitest.config.ts sets it), never in a store package.
   */
  testHooks?: boolean;
}

export interface BuildResult {
  dirs: Partial<Record<Browser, string>>;
  zips: string[];
  rulesetCount: number;
  dnr: DnrReport;
  rules: DnrRule[];
  /** Chromium: hosts whose main frames go to the handoff page (their rulesets compiled partially). */
  handoff: HandoffScope;
  diagnostics: Diagnostic[];
}

const ENTRY: Record<Browser, string> = {
  chromium: 'src/background/chromium.ts',
  firefox: 'src/background/firefox.ts',
};

/** The version the packages carry: packages/extension/package.json's, one place to bump. */
export function extensionVersion(): string {
  return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string })
    .version;
}

/**
 * Writes an unpacked extension per browser: the background script bundled from TypeScript with
 * the browser-safe engine, the rulesets as a compiled bundle, and for Chromium the default
 * rulesets compiled to a static declarativeNetRequest ruleset.
 */
export async function buildExtension(options: BuildOptions = {}): Promise<BuildResult> {
  const outDir = resolve(options.outDir ?? join(packageDir, 'build'));
  const browsers = options.browsers ?? ['chromium', 'firefox'];
  const version = options.version ?? extensionVersion();
  // The defaults carry their TIMESTAMP, which a channel replacing them must not be older than
  // (other rulesets are stamped 0 unless they come as a bundle with its own stamp).
  const loaded =
    options.rulesets === undefined
      ? loadRulesets([defaultRulesetsDir()], { timestamp: defaultRulesetsTimestamp() })
      : loadRulesets(
          options.rulesets,
          options.timestamp === undefined ? {} : { timestamp: options.timestamp },
        );
  // Parsed rulesets keep file positions for the report; a bundle given as input is decoded.
  const rulesets: Ruleset[] =
    loaded.rulesets.length === loaded.engine.rulesetCount
      ? loaded.rulesets
      : Array.from({ length: loaded.engine.rulesetCount }, (_, id) => loaded.engine.ruleset(id));
  // The static set alone takes trailing dots off hosts (a regex per host shape); see engine dnr/trailing-dots.ts.
  const { rules, report } = compileDnr(rulesets, { trailingDots: true });
  // Compiled here with the regex door's verdicts, whatever the input was (a bundle given as input
  // is decoded above): the background trusts the verdicts of this one file (engine-loader.ts),
  // so every verdict in it must be one this build worked out itself.
  const bundle = compileBundle(rulesets, {
    timestamp: loaded.engine.header.timestamp,
    regexVerdicts: true,
  });
  const handoff = handoffScope(rulesets, report.omissions);

  const result: BuildResult = {
    dirs: {},
    zips: [],
    rulesetCount: rulesets.length,
    dnr: report,
    rules,
    handoff,
    diagnostics: loaded.diagnostics,
  };
  const testHooks = options.testHooks ?? process.env.HTTPSIFY_TEST_HOOKS === '1';
  for (const browser of browsers) {
    const dir = join(outDir, browser);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'rules'), { recursive: true });
    await esbuild({
      entryPoints: [join(packageDir, ENTRY[browser])],
      outfile: join(dir, BACKGROUND_SCRIPT),
      bundle: true,
      format: browser === 'chromium' ? 'esm' : 'iife',
      platform: 'browser',
      target: browser === 'chromium' ? 'chrome120' : 'firefox140',
      minify: false,
      sourcemap: false,
      logLevel: 'silent',
      define: { HTTPSIFY_TEST_HOOKS: String(testHooks) },
    });
    writeFileSync(join(dir, DEFAULT_BUNDLE_PATH), bundle);
    if (browser === 'chromium') {
      writeFileSync(join(dir, STATIC_RULES_PATH), JSON.stringify(rules));
      writeFileSync(join(dir, HANDOFF_SCOPE_PATH), JSON.stringify(handoff));
    }
    // Popup, options and fallback pages with their _locales; the manifest gains their entries.
    await buildUiAssets(dir, browser);
    const manifest = {
      ...manifestFor(browser, { version, feedback: options.feedback }),
      ...uiManifestEntries(browser),
    };
    writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    result.dirs[browser] = dir;
    if (options.zip ?? true) {
      // An older version's package (or a .zip from before Firefox's became .xpi) would sit next
      // to the new one and be uploaded by mistake.
      const older = (name: string) =>
        name.startsWith(`httpsify-${browser}-`) && /\.(zip|xpi)$/.test(name);
      for (const name of readdirSync(outDir)) if (older(name)) rmSync(join(outDir, name));
      // Both are zip files; AMO and Firefox name theirs .xpi.
      const zip = join(
        outDir,
        `httpsify-${browser}-${version}.${browser === 'firefox' ? 'xpi' : 'zip'}`,
      );
      zipDirectory(dir, zip);
      result.zips.push(zip);
    }
  }
  return result;
}
