import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requestSettings } from '../src/fetch-test/request-settings.js';
import { sweepClient } from '../src/sweep/polite-settings.js';
import { makeTestPki } from './support/fetch-test-servers.js';
import { runCliSync } from './support/run-cli.js';

const settings = (ca: string) =>
  requestSettings({
    resolve: [],
    caFiles: [ca],
    timeoutMs: 1000,
    maxBodyBytes: 1000,
    allowPrivate: false,
  });

describe('--ca FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-ca-'));
  const pki = makeTestPki(['a.test']);
  const der = join(dir, 'ca.der');
  execFileSync('openssl', ['x509', '-in', pki.caPath, '-outform', 'der', '-out', der]);
  const text = join(dir, 'notes.txt');
  writeFileSync(text, 'my CA is in the other file\n');
  const broken = join(dir, 'broken.pem');
  writeFileSync(
    broken,
    `${readFileSync(pki.caPath, 'utf8')}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
  );

  it('takes a PEM file of certificates', () => {
    expect(settings(pki.caPath).ca).toContain(readFileSync(pki.caPath, 'utf8'));
  });

  it('refuses, by name, a file with no PEM certificate or one that does not parse', () => {
    expect(() => settings(der)).toThrow(`--ca ${der}: no PEM certificate in it`);
    expect(() => settings(text)).toThrow(`--ca ${text}: no PEM certificate in it`);
    expect(() => settings(broken)).toThrow(`--ca ${broken}: certificate 2 does not parse`);
  });

  it('is refused the same way by sweep and by the commands, with exit status 2', () => {
    expect(() =>
      sweepClient({
        caFiles: [der],
        resolve: [],
        perHostConnections: 1,
      } as unknown as Parameters<typeof sweepClient>[0]),
    ).toThrow(`--ca ${der}: no PEM certificate in it`);
    const rules = join(dir, 'A.xml');
    writeFileSync(
      rules,
      '<ruleset name="A">\n\t<target host="a.test"/>\n\t<rule from="^http:" to="https:"/>\n</ruleset>\n',
    );
    const run = runCliSync(['fetch-test', '--ca', der, rules]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--ca ${der}: no PEM certificate in it`);
  });
});
