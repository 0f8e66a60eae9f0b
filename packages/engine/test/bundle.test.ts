import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BundleError, compileBundle, FORMAT_VERSION, loadBundle, parseRulesetXml, readBundleHeader, type Ruleset } from '../src/index.js';
import { defaultRulesetsDir, listRulesetFiles, loadRulesets } from '../src/node/index.js';

const defaults: Ruleset[] = loadRulesets([defaultRulesetsDir()]).rulesets;

describe('compiled bundle', () => {
  const bundle = compileBundle(defaults, { timestamp: 1_750_000_000 });

  it('carries magic, version, size, timestamp and ruleset count in its header', () => {
    expect(Buffer.from(bundle.subarray(0, 7)).toString('latin1')).toBe('HTTPSFY');
    expect(readBundleHeader(bundle)).toEqual({ formatVersion: FORMAT_VERSION, byteLength: bundle.length, timestamp: 1_750_000_000, rulesetCount: defaults.length });
  });

  it('round-trips every ruleset through the bundle (tests aside)', () => {
    const engine = loadBundle(bundle);
    expect(engine.rulesetCount).toBe(defaults.length);
    defaults.forEach((rs, id) => {
      const back = engine.ruleset(id);
      expect(back.name).toBe(rs.name);
      expect(back.targets.map((t) => t.host).sort()).toEqual([...new Set(rs.targets.map((t) => t.host))].sort());
      expect(back.rules.map((r) => [r.from, r.to])).toEqual(rs.rules.map((r) => [r.from, r.to]));
      expect(back.exclusions.map((e) => e.pattern)).toEqual(rs.exclusions.map((e) => e.pattern));
      expect(back.secureCookies.map((c) => [c.host, c.name])).toEqual(rs.secureCookies.map((c) => [c.host, c.name]));
    });
  });

  it('rejects truncated, extended, corrupt and wrong-version bundles with a clear error', () => {
    expect(() => loadBundle(bundle.subarray(0, 20))).toThrow(/shorter than the 40-byte header/);
    expect(() => loadBundle(bundle.subarray(0, bundle.length - 8))).toThrow(/truncated bundle/);
    const longer = new Uint8Array(bundle.length + 4);
    longer.set(bundle);
    expect(() => loadBundle(longer)).toThrow(/unexpected bytes after the end/);
    const wrongVersion = bundle.slice();
    new DataView(wrongVersion.buffer).setUint32(8, FORMAT_VERSION + 1, true);
    expect(() => loadBundle(wrongVersion)).toThrow(new RegExp(`format version ${FORMAT_VERSION + 1} is not supported`));
    const badMagic = bundle.slice();
    badMagic[0] = 0x58;
    expect(() => loadBundle(badMagic)).toThrow(/bad magic/);
    // Flip one bit at many places: every corruption is caught, none crashes differently.
    for (let at = 40; at < bundle.length; at += 97) {
      const corrupt = bundle.slice();
      corrupt[at] = (corrupt[at] as number) ^ 0x10;
      expect(() => loadBundle(corrupt)).toThrow(BundleError);
    }
  });

  it('trusted loading skips only the checksum and cross-reference scans', () => {
    const trusted = loadBundle(bundle, { verify: 'trusted' });
    const full = loadBundle(bundle);
    for (const rs of defaults) for (const t of rs.tests) expect(trusted.rewrite(t.url)).toBe(full.rewrite(t.url));
    const flipped = bundle.slice();
    flipped[bundle.length - 100] = (flipped[bundle.length - 100] as number) ^ 1;
    expect(() => loadBundle(flipped)).toThrow(/checksum/);
    expect(() => loadBundle(flipped, { verify: 'trusted' })).not.toThrow();
    expect(() => loadBundle(bundle.subarray(0, 100), { verify: 'trusted' })).toThrow(/truncated/);
  });

  it('loads from an unaligned copy of the bytes', () => {
    const padded = new Uint8Array(bundle.length + 1);
    padded.set(bundle, 1);
    expect(loadBundle(padded.subarray(1)).rewrite('http://en.wikipedia.org/wiki/A')).toBe('https://en.wikipedia.org/wiki/A');
  });

  it('is deterministic for the same input and differs when a ruleset changes', () => {
    const again = compileBundle(defaults, { timestamp: 1_750_000_000 });
    expect(Buffer.compare(Buffer.from(bundle), Buffer.from(again))).toBe(0);
    const changed = compileBundle(defaults.slice(1), { timestamp: 1_750_000_000 });
    expect(Buffer.compare(Buffer.from(bundle), Buffer.from(changed))).not.toBe(0);
  });

  it('reads the defaults from disk in file-name order', () => {
    const names = listRulesetFiles(defaultRulesetsDir()).map((f) => parseRulesetXml(readFileSync(f, 'utf8'), f).ruleset?.name);
    expect(names).toEqual(defaults.map((rs) => rs.name));
  });
});
