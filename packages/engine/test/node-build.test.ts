import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { compileBundle, type Ruleset } from '../src/index.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

const ruleset = (name: string, host: string, from: string, to: string): Ruleset => ({
  name,
  targets: [{ host }],
  rules: [{ from, to }],
  exclusions: [],
  secureCookies: [],
  tests: [],
});

/**
 * The package as Node imports it (`@httpsify/engine`, the esbuild build of
 * scripts/bundle-node.mjs), in a fresh process: what it loads, and when. A process that loads a
 * bundle and rewrites with a pattern in a finite language must load none of the code that only
 * regexes or compiling need; each later step loads what it needs and still answers right.
 */
describe('the Node build of the engine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-node-build-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads the regex analysis, regexpp and the bundle writer only when a call needs them', () => {
    const bundlePath = join(dir, 'rules.bundle');
    writeFileSync(
      bundlePath,
      compileBundle([
        ruleset('Finite', 'a.test', '^http://(www\\.)?a\\.test/', 'https://www.a.test/'),
        ruleset('Regex', 'b.test', '^http://b\\.test/(\\d+)/x', 'https://b.test/$1/y'),
        ruleset('Lookbehind', 'c.test', '^http://c\\.test/(?<=test/)x', 'https://c.test/y'),
      ]),
    );
    const script = `
      import { createRequire } from 'node:module';
      import { readFileSync } from 'node:fs';
      const { loadBundle, compileBundle } = await import('@httpsify/engine');
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).map((p) => p.split(/[\\\\/]/).slice(-3).join('/')).sort();
      const steps = [];
      const engine = loadBundle(readFileSync(${JSON.stringify(bundlePath)}), { verify: 'trusted' });
      steps.push({ result: engine.rewrite('http://a.test/page'), loaded: loaded() });
      steps.push({ result: engine.rewrite('http://b.test/42/x'), loaded: loaded() });
      steps.push({ result: engine.rewrite('http://c.test/x'), loaded: loaded() });
      const again = loadBundle(compileBundle([engine.ruleset(0)]));
      steps.push({ result: again.rewrite('http://a.test/'), loaded: loaded() });
      process.stdout.write(JSON.stringify(steps));`;
    const steps = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: packageDir,
        encoding: 'utf8',
      }),
    ) as {
      result: string | null;
      loaded: string[];
    }[];
    const has = (step: number, file: string) =>
      steps[step]?.loaded.some((p) => p.endsWith(file)) ?? false;
    const analysis = 'lazy/regex-analysis.cjs';
    const regexpp = 'regexpp/index.js';
    const writer = 'lazy/bundle-writer.cjs';

    expect(steps[0]?.result).toBe('https://www.a.test/page');
    expect(steps[0]?.loaded).toEqual([]);

    expect(steps[1]?.result).toBe('https://b.test/42/y');
    expect([has(1, analysis), has(1, regexpp), has(1, writer)]).toEqual([true, false, false]);

    expect(steps[2]?.result).toBe('https://c.test/y');
    expect([has(2, regexpp), has(2, writer)]).toEqual([true, false]);

    expect(steps[3]?.result).toBe('https://www.a.test/');
    expect(has(3, writer)).toBe(true);
  });
});
