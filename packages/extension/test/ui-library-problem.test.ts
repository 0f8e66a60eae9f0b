import { readFileSync } from 'node:fs';
import { deflateSync, gzipSync, strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { LIBRARY_LIMITS, LibraryRefused } from '../src/library/archive-entries.js';
import { readArchive } from '../src/library/archive.js';
import { LibraryService } from '../src/library/library-service.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { libraryImportProblem } from '../src/ui/shared/library-problem.js';
import { rawZip } from './support/raw-zip.js';
import { tar } from './support/tar.js';

const messages = JSON.parse(
  readFileSync(new URL('../static/_locales/en/messages.json', import.meta.url), 'utf8'),
) as Record<string, { message: string }>;
const RULESET =
  '<ruleset name="A"><target host="a.test"/><rule from="^http:" to="https:"/></ruleset>';
const SMALL = { totalBytes: 64 * 1024, files: 3, fileBytes: 16 * 1024 };

/** The refusal the archive reader gives for these bytes, as the options page receives it. */
function refusal(bytes: Uint8Array, limits = SMALL): string {
  try {
    readArchive(bytes, { ...LIBRARY_LIMITS, ...limits });
  } catch (e) {
    expect(e).toBeInstanceOf(LibraryRefused);
    return (e as Error).message;
  }
  throw new Error('expected a refusal');
}

/** What the background answers when an import of these files finishes. */
async function finishing(
  files: { path: string; text: string }[],
  begin = true,
): Promise<{ error: string; problems?: unknown[] }> {
  const service = new LibraryService({
    area: new MemoryStorageArea(),
    apply: async () => undefined,
    platformProblem: async () => null,
  });
  await service.start();
  const { upload } = (await service.handle(
    { type: 'libraryBegin', name: 'lib.tar', skipped: 0, problems: [] },
    () => undefined,
  )) as { upload: number };
  await service.handle({ type: 'libraryFiles', upload, files }, () => undefined);
  return (await service.handle(
    { type: 'libraryFinish', upload: begin ? upload : upload + 1 },
    () => undefined,
  )) as { error: string; problems?: unknown[] };
}

describe('a refused library import, in words', () => {
  it('gives each real refusal its own sentence', async () => {
    const tarFile = tar([{ name: 'rules/A.xml', data: RULESET }]);
    const shared = deflateSync(strToU8(RULESET));
    const cases: [string, string][] = [
      [refusal(strToU8('just some text, not an archive')), 'libraryProblemNotArchive'],
      [refusal(gzipSync(strToU8('a gzip of plain text'))), 'libraryProblemNotArchive'],
      [
        refusal(tar(Array.from({ length: 5 }, (_, i) => ({ name: `r${i}.xml`, data: RULESET })))),
        'libraryProblemTooMany',
      ],
      [refusal(tar([{ name: 'big.xml', data: 'x'.repeat(70 * 1024) }])), 'libraryProblemTooLarge'],
      [refusal(tarFile.slice(0, 600)), 'libraryProblemDamaged'],
      [refusal(gzipSync(tarFile).slice(0, 40)), 'libraryProblemDamaged'],
      [refusal(zipSync({ 'A.xml': strToU8(RULESET) }).slice(0, 60)), 'libraryProblemDamaged'],
      [
        refusal(
          rawZip([
            { name: 'small.xml', data: deflateSync(new Uint8Array(1024 * 1024)), declared: 100 },
          ]),
        ),
        'libraryProblemHostile',
      ],
      [
        refusal(
          rawZip(
            ['a.xml', 'b.xml'].map((name) => ({ name, data: shared, declared: RULESET.length })),
          ),
        ),
        'libraryProblemHostile',
      ],
      [
        refusal(
          rawZip([
            { name: 'A.xml', data: deflateSync(strToU8(RULESET)), declared: RULESET.length },
          ]),
          { ...SMALL, timeMs: -1 } as typeof SMALL,
        ),
        'libraryProblemSlow',
      ],
      [
        (await finishing([{ path: 'README.md', text: 'no rulesets here' }])).error,
        'libraryProblemNoRulesets',
      ],
      [
        (await finishing([{ path: 'A.xml', text: RULESET }], false)).error,
        'libraryProblemInterrupted',
      ],
    ];
    for (const [raw, key] of cases) expect(libraryImportProblem(raw), raw).toBe(key);
    expect(libraryImportProblem('an error nobody foresaw')).toBe('libraryProblemFailed');
  });

  it('keeps the files’ own problems when none of them holds a usable ruleset', async () => {
    const done = await finishing([
      { path: 'Broken.xml', text: '<ruleset name="Broken">\n<target host="b.test">\n' },
    ]);
    expect(libraryImportProblem(done.error)).toBe('libraryProblemNoUsable');
    expect(done.problems).toEqual([expect.objectContaining({ file: 'Broken.xml' })]);
  });

  it('says each in plain sentences that tell people what to do', () => {
    const keys = Object.keys(messages).filter((k) => k.startsWith('libraryProblem'));
    expect(keys.length).toBeGreaterThanOrEqual(10);
    for (const key of keys) {
      const text = messages[key]?.message as string;
      expect(text, key).toMatch(/^Nothing was imported: [a-z].*\.$/);
      expect(text, key).not.toMatch(/\b(tar archive|central directory|zip64|header|bytes?)\b/);
    }
  });
});
