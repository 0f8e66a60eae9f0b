import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileBundle, loadBundle } from '@httpsify/engine';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { workTimeout } from '../../engine/test/support/work-timeout.js';
import { runCliSync } from './support/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'httpsify-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BENIGN =
  '<ruleset name="Benign">\n\t<target host="benign.test" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n';
/** Refused: a backreference (no proof, no linear-time form). Exclusion on line 3. */
const REFUSED =
  '<ruleset name="Refused">\n\t<target host="refused.test" />\n\t<exclusion pattern="^http://refused\\.test/((a)\\2?)+!$" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n';
/** The first shape: runs in linear time instead of being refused. */
const LINEAR =
  '<ruleset name="Linear">\n\t<target host="www.example.org" />\n\t<rule from="^http://(www\\.)?example\\.org/(a|aa)+$" to="https://www.example.org/" />\n</ruleset>\n';
/** A character class in the prefix, then nested quantifiers. */
const CLASS_PREFIX =
  '<ruleset name="ClassPrefix">\n\t<target host="x.evil.test" />\n\t<rule from="^http://[x]\\.evil\\.test/(a+)+b" to="https://x.evil.test/" />\n\t<securecookie host="^(a|a)+$" name="((a)\\2?)+!$" />\n</ruleset>\n';
for (const [name, xml] of Object.entries({
  Benign: BENIGN,
  Refused: REFUSED,
  Linear: LINEAR,
  ClassPrefix: CLASS_PREFIX,
}))
  writeFileSync(join(dir, `${name}.xml`), xml);

const PUMP = 'a'.repeat(5000);
const URLS = [
  'http://benign.test/x',
  `http://refused.test/${PUMP}!`,
  `http://www.example.org/${'a'.repeat(46)}!`,
  'http://www.example.org/aaa',
  `http://x.evil.test/${PUMP}!`,
];
// A hang is the failure mode being tested: without the regex door these run for minutes. Each
// run handles these few URLs and rulesets, a second each at most even on a loaded machine.
const BOUNDED = { timeout: workTimeout(URLS.length, 1_000) };

describe('hostile regexes through the CLI', () => {
  it('rewrite (XML): finishes, reports the refused ruleset on stderr and goes on', () => {
    const r = runCliSync(['rewrite', '--rules', dir, ...URLS], BOUNDED);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'https://benign.test/x',
      `http://refused.test/${PUMP}!`,
      `http://www.example.org/${'a'.repeat(46)}!`,
      'https://www.example.org/',
      `http://x.evil.test/${PUMP}!`,
      '',
    ]);
    expect(r.stderr).toMatch(
      /error unsafe-regex: ruleset "Refused" is not used: its pattern .*backreference/,
    );
  });

  it('rewrite --rules BUNDLE: a bundle holding hostile patterns gets the same treatment', () => {
    const rulesets = ['Benign', 'Refused', 'Linear', 'ClassPrefix'].map(
      (n) => parseRulesetXml(readFileSync(join(dir, `${n}.xml`), 'utf8'), `${n}.xml`).ruleset!,
    );
    const bundle = join(dir, 'hostile.bundle');
    writeFileSync(bundle, compileBundle(rulesets));
    const r = runCliSync(['rewrite', '--rules', bundle, ...URLS], BOUNDED);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('https://benign.test/x');
    expect(r.stdout.split('\n')[3]).toBe('https://www.example.org/');
    expect(r.stderr).toContain('ruleset "Refused" is not used');
  });

  it('links: reports the refused ruleset once on stderr, as rewrite does, and rewrites the rest', () => {
    const page = join(dir, 'page.md');
    writeFileSync(
      page,
      `[a](http://benign.test/x) [b](http://refused.test/${PUMP}!) [c](http://refused.test/a)\n`,
    );
    const r = runCliSync(['links', 'check', page, '--rules', dir], BOUNDED);
    expect(r.stdout).toContain('https://benign.test/x');
    expect(
      r.stderr.match(
        /error unsafe-regex: ruleset "Refused" is not used: its pattern .*backreference/g,
      ),
    ).toHaveLength(1);
  });

  it('check: file:line:col and the unsafe-regex code, exit 1', () => {
    const r = runCliSync(
      ['check', join(dir, 'Refused.xml'), join(dir, 'ClassPrefix.xml'), join(dir, 'Linear.xml')],
      BOUNDED,
    );
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`${join(dir, 'Refused.xml')}:3:2: error unsafe-regex:`);
    expect(r.stdout).toContain(`${join(dir, 'ClassPrefix.xml')}:4:2: error unsafe-regex:`);
    expect(r.stdout).not.toContain('Linear.xml:3:2: error unsafe-regex');
  });

  it('compile: refuses to ship the refused rulesets (exit 1), ships the rest', () => {
    const out = join(dir, 'out.bundle');
    const r = runCliSync(['compile', '--rules', dir, '-o', out], BOUNDED);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('unsafe-regex');
    const engine = loadBundle(new Uint8Array(readFileSync(out)));
    const names = Array.from({ length: engine.rulesetCount }, (_, id) =>
      engine.rulesetName(id),
    ).sort();
    expect(names).toEqual(['Benign', 'Linear']);
    // A compiled bundle given back to compile is judged too.
    const again = runCliSync(
      ['compile', '--rules', join(dir, 'hostile.bundle'), '-o', join(dir, 'again.bundle')],
      BOUNDED,
    );
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('ruleset "Refused" is refused');
  });

  it('test: the refused pattern is an error at file:line:col and fails its ruleset, exit 1', () => {
    const r = runCliSync(['test', join(dir, 'Refused.xml'), join(dir, 'Benign.xml')], BOUNDED);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(
      /Refused\.xml:3:\d+: error unsafe-regex: <exclusion> pattern .* of ruleset "Refused" is refused/,
    );
    expect(r.stdout).toMatch(/^FAIL Refused /m);
    expect(r.stdout).not.toMatch(/Benign\.xml:\d+:\d+: error unsafe-regex/);
  });

  it('fetch-test: reports the refused pattern before fetching anything, exit 1', () => {
    const r = runCliSync(['fetch-test', join(dir, 'Refused.xml'), '--timeout', '2000'], BOUNDED);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /Refused\.xml:3:\d+: error unsafe-regex: <exclusion> pattern .* of ruleset "Refused" is refused/,
    );
  });
});
