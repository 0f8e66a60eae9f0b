import { gzipSync, strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { LIBRARY_LIMITS, LibraryRefused, safePath } from '../src/library/archive-entries.js';
import { readArchive } from '../src/library/archive.js';
import { tar } from './support/tar.js';

const RULESET = (name: string, host: string) =>
  `<ruleset name="${name}"><target host="${host}"/><rule from="^http:" to="https:"/></ruleset>`;
const SMALL = { totalBytes: 1024 * 1024, files: 10, fileBytes: 64 * 1024 };

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LibraryRefused);
    return (e as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('reading a ruleset library archive', () => {
  it('reads the XML files of a tar, a .tar.gz and a .zip, counting the other entries', () => {
    const entries = [
      { name: 'rules/', type: '5' },
      { name: 'rules/A.xml', data: RULESET('A', 'a.test') },
      {
        name: 'B.xml',
        prefix: 'https-everywhere-master/src/chrome/content/rules',
        data: RULESET('B', 'b.test'),
      },
      { name: 'rules/README.md', data: '# not a ruleset' },
      { name: 'rules/link.xml', type: '2' },
    ];
    for (const bytes of [tar(entries), gzipSync(tar(entries))]) {
      const got = readArchive(bytes);
      expect(got.files.map((f) => f.path)).toEqual([
        'rules/A.xml',
        'https-everywhere-master/src/chrome/content/rules/B.xml',
      ]);
      expect(got.files[0]?.text).toBe(RULESET('A', 'a.test'));
      expect(got.skipped).toBe(2);
      expect(got.problems).toEqual([]);
    }
    const zip = zipSync({
      'lib/A.xml': strToU8(RULESET('A', 'a.test')),
      'lib/notes.txt': strToU8('x'),
      'lib/sub/C.XML': strToU8(RULESET('C', 'c.test')),
    });
    const got = readArchive(zip);
    expect(got.files.map((f) => f.path).sort()).toEqual(['lib/A.xml', 'lib/sub/C.XML']);
    expect(got.skipped).toBe(1);
  });

  it('skips names that climb out of the library, with the name, and keeps the rest', () => {
    for (const bytes of [
      tar([
        { name: '../evil.xml', data: RULESET('E', 'e.test') },
        { name: '/etc/abs.xml', data: RULESET('F', 'f.test') },
        { name: 'ok.xml', data: RULESET('A', 'a.test') },
      ]),
      zipSync({
        '../evil.xml': strToU8('<x/>'),
        '/etc/abs.xml': strToU8('<x/>'),
        'ok.xml': strToU8(RULESET('A', 'a.test')),
      }),
    ]) {
      const got = readArchive(bytes);
      expect(got.files.map((f) => f.path)).toEqual(['ok.xml']);
      expect(got.problems.map((p) => p.file).sort()).toEqual(['../evil.xml', '/etc/abs.xml']);
      expect(got.problems[0]?.message).toMatch(/outside the library/);
    }
    expect(safePath('a/./b/../c.xml')).toBeNull();
    expect(safePath('C:\\x.xml')).toBeNull();
    expect(safePath('a\\b.xml')).toBe('a/b.xml');
  });

  it('refuses a huge declared size before reading anything (tar and zip)', () => {
    expect(
      refusal(() =>
        readArchive(
          tar([{ name: 'big.xml', data: 'x', declaredSize: 8 * 1024 * 1024 * 1024 - 1 }]),
        ),
      ),
    ).toMatch(/more than 64 MB/);
    const zip = zipSync({ 'big.xml': strToU8('<ruleset/>') }, { level: 0 });
    // Both the local header (offset 22) and the central directory entry (offset 24) state the size.
    const view = new DataView(zip.buffer);
    view.setUint32(22, 0xfffffff0, true);
    const central = zip.findIndex(
      (_, i) => zip[i] === 0x50 && zip[i + 1] === 0x4b && zip[i + 2] === 1 && zip[i + 3] === 2,
    );
    view.setUint32(central + 24, 0xfffffff0, true);
    expect(refusal(() => readArchive(zip))).toMatch(/more than 64 MB/);
  });

  it('refuses truncated archives with the reason', () => {
    const whole = tar([{ name: 'a.xml', data: 'y'.repeat(2000) }]);
    expect(refusal(() => readArchive(whole.subarray(0, 1024)))).toMatch(/cut short/);
    expect(refusal(() => readArchive(whole.subarray(0, 700)))).toMatch(/cut short/);
    const gz = gzipSync(whole);
    expect(refusal(() => readArchive(gz.subarray(0, gz.length - 20)))).toMatch(
      /\.gz file is (cut short|damaged)/,
    );
    const zip = zipSync({ 'a.xml': strToU8(RULESET('A', 'a.test')) });
    expect(refusal(() => readArchive(zip.subarray(0, zip.length - 30)))).toMatch(
      /\.zip file is damaged/,
    );
    const bad = tar([{ name: 'a.xml', data: 'x' }]);
    bad[10] = 65; // The checksum no longer matches.
    expect(refusal(() => readArchive(bad))).toMatch(/bad header/);
  });

  it('stops a gzip bomb at the limit without expanding it whole', () => {
    // 8 MB of zeros in an 8 KB file: refused at SMALL's 1 MB (+1 MB for tar headers).
    const bomb = gzipSync(tar([{ name: 'zeros.xml', data: new Uint8Array(8 * 1024 * 1024) }]), {
      level: 6,
    });
    expect(bomb.length).toBeLessThan(20_000);
    expect(refusal(() => readArchive(bomb, SMALL))).toMatch(/more than 2 MB once unpacked/);
    // Within the default limits the same archive is read, and the oversized file is skipped with a reason.
    const got = readArchive(bomb, { ...LIBRARY_LIMITS, totalBytes: 64 * 1024 * 1024 });
    expect(got.files).toEqual([]);
    expect(got.problems[0]).toMatchObject({
      file: 'zeros.xml',
      message: expect.stringMatching(/larger than 2 MB/),
    });
  });

  it('refuses more files than the limit, and reports files that are not UTF-8', () => {
    const many = tar(Array.from({ length: 11 }, (_, i) => ({ name: `r${i}.txt`, data: '' })));
    expect(refusal(() => readArchive(many, SMALL))).toMatch(/more than 10 files/);
    const got = readArchive(
      tar([{ name: 'latin1.xml', data: new Uint8Array([0x3c, 0xe9, 0xff, 0x3e]) }]),
    );
    expect(got.files).toEqual([]);
    expect(got.problems).toEqual([
      { file: 'latin1.xml', line: 1, message: 'not UTF-8 text; skipped' },
    ]);
  });

  it('refuses what is not an archive', () => {
    expect(refusal(() => readArchive(strToU8('<ruleset/>')))).toMatch(
      /not a \.zip, \.tar or \.tar\.gz/,
    );
    expect(refusal(() => readArchive(gzipSync(strToU8('hello'))))).toMatch(/does not hold a tar/);
  });
});
