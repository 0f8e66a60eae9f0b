import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadRulesets } from '@httpsify/engine/node';
import {
  corpusRulesDir,
  corpusTarball,
  readOracle,
  type OracleCase,
} from '../../engine/test/support/corpus.js';
import { CORPUS_RULESETS, workTimeout } from '../../engine/test/support/work-timeout.js';
import { runCliSync } from './support/run-cli.js';

const RULESET = (name: string, host: string) =>
  `<ruleset name="${name}">\n\t<target host="${host}" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n`;

let oracle: OracleCase[];
beforeAll(async () => {
  oracle = (await readOracle()).slice(0, 5_000);
});

describe('--rules takes archives through the one library reader', () => {
  it(
    'the corpus .tar.gz, read from ../shared, compiles to the same bundle as its extracted folder',
    () => {
      const fromArchive = loadRulesets([corpusTarball]);
      expect(fromArchive.engine.rulesetCount).toBe(CORPUS_RULESETS);
      expect(fromArchive.diagnostics).toEqual([]);
      expect(
        Buffer.compare(
          Buffer.from(fromArchive.bundle),
          Buffer.from(loadRulesets([corpusRulesDir()]).bundle),
        ),
      ).toBe(0);
    },
    workTimeout(CORPUS_RULESETS, 10),
  );

  it(
    'rewrite --rules corpus.tar.gz agrees with the oracle',
    () => {
      const r = runCliSync(['rewrite', '--rules', corpusTarball, '--format', 'jsonl'], {
        stdin: oracle.map((c) => c.url).join('\n') + '\n',
      });
      expect(r.stderr).toBe('');
      const got = r.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { rewritten: string | null }).rewritten);
      expect(got).toEqual(oracle.map((c) => c.expected));
      expect(got.filter((g) => g !== null).length).toBeGreaterThan(100);
    },
    workTimeout(CORPUS_RULESETS, 10),
  );

  it('check, test, compile, dnr and links read a small .tar.gz and .zip; entries are named inside it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-rules-archive-'));
    mkdirSync(join(dir, 'src', 'rules'), { recursive: true });
    writeFileSync(join(dir, 'src', 'rules', 'A.xml'), RULESET('A', 'a.example'));
    writeFileSync(
      join(dir, 'src', 'rules', 'B.xml'),
      RULESET('B', 'b.example').replace('<rule from="^http:"', '<rule from="^https?:"'),
    );
    writeFileSync(join(dir, 'doc.md'), '[a](http://a.example/x)\n');
    expect(
      spawnSync('tar', ['czf', join(dir, 'r.tar.gz'), '-C', join(dir, 'src'), 'rules']).status,
    ).toBe(0);
    expect(
      spawnSync('zip', ['-qr', join(dir, 'r.zip'), 'rules'], { cwd: join(dir, 'src') }).status,
    ).toBe(0);
    for (const archive of [join(dir, 'r.tar.gz'), join(dir, 'r.zip')]) {
      expect(runCliSync(['rewrite', '--rules', archive, 'http://a.example/p']).stdout).toBe(
        'https://a.example/p\n',
      );
      const check = runCliSync(['check', archive, '--no-baseline']);
      expect(check.stdout).toContain(`${archive}/rules/B.xml:3:2: error from-prefix`);
      expect(check.status).toBe(1);
      const tested = runCliSync(['test', archive]);
      expect(tested.stdout).toContain(`ok   A (${archive}/rules/A.xml)`);
      expect(tested.stdout).toContain('2 rulesets, 2 tests: 1 ok, 1 with problems');
      const compiled = runCliSync(['compile', '--rules', archive, '-o', join(dir, 'out.bundle')]);
      expect(compiled.stderr).toMatch(/2 rulesets/);
      expect(runCliSync(['dnr', '--rules', archive, '-o', join(dir, 'out.json')]).status).toBe(0);
      expect(
        runCliSync(['links', 'check', '--rules', archive, join(dir, 'doc.md')]).stdout,
      ).toContain('http://a.example/x -> https://a.example/x');
    }
  });

  it('refuses an entry that climbs out of the archive, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-rules-evil-'));
    mkdirSync(join(dir, 'in'), { recursive: true });
    writeFileSync(join(dir, 'A.xml'), RULESET('A', 'a.example'));
    // GNU tar keeps a leading ../ with -P: the entry is "../A.xml".
    expect(
      spawnSync('tar', ['-P', '-cf', join(dir, 'evil.tar'), '../A.xml'], { cwd: join(dir, 'in') })
        .status,
    ).toBe(0);
    const r = runCliSync(['rewrite', '--rules', join(dir, 'evil.tar'), 'http://a.example/']);
    expect(r.stderr).toContain(`${join(dir, 'evil.tar')}/../A.xml`);
    expect(r.stderr).toContain('leads outside the library');
    expect(r.status).toBe(2);
  });
});
