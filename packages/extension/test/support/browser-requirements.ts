/**
 * Which test files drive a real browser, and whether that browser is installed. Without it, a
 * test would wait for a browser that never starts and end in a raw spawn error; instead:
 * outside CI those files are left out with one line saying what to install, and in CI (where
 * .ci/run installs both browsers) they run and fail at once with that same line.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BROWSERS = { chromium: '/usr/bin/chromium', firefox: '/usr/bin/firefox-esr' } as const;
export type TestBrowser = keyof typeof BROWSERS;
export const INSTALL_HINT = 'apt-get install chromium firefox-esr';

/** One line naming the missing browser and how to install it. */
export function missingBrowserMessage(
  browser: TestBrowser,
  path: string = BROWSERS[browser],
): string {
  return `${browser === 'chromium' ? 'Chromium' : 'Firefox ESR'} is not installed (${path}); install the test browsers with: ${INSTALL_HINT}`;
}

/** Throws that line when the browser is missing: the launchers call it before starting one. */
export function requireBrowser(browser: TestBrowser, path: string = BROWSERS[browser]): string {
  if (!existsSync(path)) throw new Error(missingBrowserMessage(browser, path));
  return path;
}

/** The modules that start each browser; a test importing one of them (directly or through a support module) needs it. */
const LAUNCHERS: Record<TestBrowser, string> = { chromium: 'browser', firefox: 'firefox' };

const testDir = dirname(dirname(fileURLToPath(import.meta.url)));

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/from '\.\/(?:support\/)?([\w-]+)\.js'/g)].map((m) => m[1] as string);
}

/** Test files (relative to the repository root) that need `browser`. */
export function browserTestFiles(browser: TestBrowser, repoRoot: string): string[] {
  const supportDir = join(testDir, 'support');
  const needs = new Set([LAUNCHERS[browser]]);
  // Support modules that reach the launcher through other support modules.
  for (let grew = true; grew;) {
    grew = false;
    for (const f of readdirSync(supportDir)) {
      const name = f.replace(/\.ts$/, '');
      if (!needs.has(name) && importsOf(join(supportDir, f)).some((m) => needs.has(m))) {
        needs.add(name);
        grew = true;
      }
    }
  }
  return readdirSync(testDir)
    .filter((f) => f.endsWith('.test.ts') && importsOf(join(testDir, f)).some((m) => needs.has(m)))
    .map((f) => relative(repoRoot, join(testDir, f)));
}

/**
 * Test files to leave out of this run: none in CI; elsewhere those whose browser is missing,
 * announced once on stderr.
 */
export function browserTestExclusions(
  repoRoot: string,
  env: NodeJS.ProcessEnv = process.env,
  installed: (browser: TestBrowser) => boolean = (browser) => existsSync(BROWSERS[browser]),
  say: (line: string) => void = (line) => process.stderr.write(line),
): string[] {
  if (env['CI'] !== undefined && env['CI'] !== '' && env['CI'] !== 'false') return [];
  const excluded: string[] = [];
  for (const browser of Object.keys(BROWSERS) as TestBrowser[]) {
    if (installed(browser)) continue;
    const files = browserTestFiles(browser, repoRoot);
    excluded.push(...files);
    say(
      `Skipping ${files.length} ${browser} test files: ${missingBrowserMessage(browser)} (with CI set they run and fail)\n`,
    );
  }
  return excluded;
}
