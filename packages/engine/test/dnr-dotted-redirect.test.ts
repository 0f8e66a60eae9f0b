import { describe, expect, it } from 'vitest';
import { createEngine } from '../src/index.js';
import { parseRulesetXml } from '../src/parse/index.js';
import { compileDnr, DnrEmulator, follow } from '../src/dnr/index.js';
import { hostRunWithoutTrailingDot } from '../src/dnr/trailing-dots.js';

/**
 * A regex rule whose host is a run of a class that takes dots (`([^/]+)/`) matches a dotted
 * host too (Chromium's domain lists ignore the dots) and would carry the dot into the new URL:
 * `http://dmlp.org./` to `https://www.dmlp.org./`, where the reference strips the dots first
 * and gives `https://www.dmlp.org/`. Rules from EFF's 2021 library (DMLP.org, m2ch).
 */
const XML = [
  `<ruleset name="DMLP.org (partial)"><target host="citmedialaw.org"/><target host="www.citmedialaw.org"/>` +
    `<target host="dmlp.org"/><target host="www.dmlp.org"/><rule from="^http://(?:www\\.)?([^/]+)/" to="https://www.$1/"/></ruleset>`,
  `<ruleset name="m2ch"><target host="m2ch.hk"/><target host="www.m2ch.hk"/><target host="m2ch.611.to"/><target host="www.m2ch.611.to"/>` +
    `<rule from="^http://(www\\.)?([\\w.]+)/" to="https://$2/"/></ruleset>`,
];

function load() {
  const rulesets = XML.map((x, i) => {
    const { ruleset } = parseRulesetXml(x, `t${i}.xml`);
    if (!ruleset) throw new Error('bad fixture');
    return ruleset;
  });
  return {
    engine: createEngine(rulesets),
    emulator: new DnrEmulator(compileDnr(rulesets, { trailingDots: true }).rules),
  };
}

describe('DNR: host-changing regex redirects and trailing dots', () => {
  it('never send a dotted host somewhere the reference does not', () => {
    const { engine, emulator } = load();
    const urls = [
      'http://dmlp.org./',
      'http://www.dmlp.org./favicon.ico',
      'http://citmedialaw.org../x?y',
      'http://m2ch.hk./',
      'http://www.m2ch.611.to./a',
    ];
    for (const url of urls) {
      for (const type of ['script', 'main_frame'] as const) {
        const got = follow(emulator, { url, type });
        // Reproduced or missed, never different.
        if (got !== null) expect(got, `${type} ${url}`).toBe(engine.rewrite(url));
      }
    }
  });

  it('still rewrite the undotted hosts exactly as before', () => {
    const { engine, emulator } = load();
    for (const url of [
      'http://dmlp.org/',
      'http://www.dmlp.org/favicon.ico',
      'http://www.citmedialaw.org/x?y',
      'http://www.m2ch.hk/',
      'http://m2ch.611.to/a',
    ]) {
      const got = emulator.match({ url, type: 'script' }).redirectUrl;
      expect(got, url).toBe(engine.rewrite(url));
      expect(got).not.toBeNull();
    }
  });

  it('spell the host run so that it cannot end with a dot, only where the run is the whole host', () => {
    expect(hostRunWithoutTrailingDot('^http://(?:www\\.)?([^/]+)/')).toBe(
      '^http://(?:www\\.)?([^/]*[^/\\.])/',
    );
    expect(hostRunWithoutTrailingDot('^http://(www\\.)?([\\w.]+)/')).toBe(
      '^http://(www\\.)?([\\w.]*[\\w])/',
    );
    // A run that may read past the host (`/` in the class, `.*` before it) is left alone, as is
    // one whose class holds a dot only inside a range, or a host that ends in a literal.
    for (const source of [
      '^http://([\\w./]+)/',
      '^http://.*([^/]+)/',
      '^http://([!-z]+)/',
      '^http://([^/]+)\\.example\\.com/',
      '^http://([^/]+)',
    ])
      expect(hostRunWithoutTrailingDot(source), source).toBe(source);
  });
});
