import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  defaultRulesetsDir,
  loadPrebuiltDefaults,
  loadRulesets,
  writeDefaultBundle,
} from '../src/node/index.js';

/** The default rulesets' own test URLs, and a few each ruleset leaves alone. */
function probeUrls(): string[] {
  const { rulesets } = loadRulesets([defaultRulesetsDir()]);
  return rulesets.flatMap((rs) => [
    ...rs.tests.map((t) => t.url),
    ...rs.targets.map((t) => `http://${t.host.replace('*', 'x')}/p?q=1`),
  ]);
}

describe('prebuilt default rulesets', () => {
  const copy = (): { rulesets: string; bundle: string } => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-defaults-'));
    cpSync(defaultRulesetsDir(), join(dir, 'rulesets'), { recursive: true });
    return { rulesets: join(dir, 'rulesets'), bundle: join(dir, 'dist') };
  };

  it('rewrites exactly as the XML it was built from', () => {
    const where = copy();
    writeDefaultBundle(where);
    const prebuilt = loadPrebuiltDefaults({}, where);
    expect(prebuilt).not.toBeNull();
    const compiled = loadRulesets([where.rulesets]).engine;
    const urls = probeUrls();
    expect(urls.length).toBeGreaterThan(50);
    expect(urls.map((u) => prebuilt!.engine.rewrite(u))).toEqual(
      urls.map((u) => compiled.rewrite(u)),
    );
    expect(urls.some((u) => compiled.rewrite(u) !== null)).toBe(true);
  });

  it('is not used once a ruleset changed after the build (the XML is compiled instead)', () => {
    const where = copy();
    writeDefaultBundle(where);
    const file = join(where.rulesets, 'EFF.xml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('</ruleset>', '<target host="extra.example" /></ruleset>'),
    );
    expect(loadPrebuiltDefaults({}, where)).toBeNull();
  });

  it('is not used when its bytes do not match the checksum', () => {
    const where = copy();
    const path = writeDefaultBundle(where);
    const bytes = readFileSync(path);
    bytes[bytes.length - 1] ^= 1;
    writeFileSync(path, bytes);
    expect(loadPrebuiltDefaults({}, where)).toBeNull();
  });

  it('is what the build ships: the package’s own prebuilt bundle matches its rulesets', () => {
    expect(loadPrebuiltDefaults()).not.toBeNull();
  });
});
