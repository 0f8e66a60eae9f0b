import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { corpusRulesDir, readOracle, type OracleCase } from '../../engine/test/support/corpus.js';
import { CORPUS_RULESETS, workTimeout } from '../../engine/test/support/work-timeout.js';
import { runCli, runCliSync } from './support/run-cli.js';

// Three corpus-wide runs share the test's bound below; one of them may take all of it.
const CORPUS_RUN = workTimeout(CORPUS_RULESETS, 20);

let oracle: OracleCase[];
beforeAll(async () => {
  oracle = await readOracle();
});

describe('httpsify rewrite on the bundled defaults', () => {
  it('rewrites a URL given as an argument', () => {
    const r = runCliSync(['rewrite', 'http://en.wikipedia.org/wiki/Example']);
    expect(r).toMatchObject({
      status: 0,
      stdout: 'https://en.wikipedia.org/wiki/Example\n',
      stderr: '',
    });
  });

  it('prints an uncovered URL unchanged with exit code 0', () => {
    expect(runCliSync(['rewrite', 'http://example.invalid/x'])).toMatchObject({
      status: 0,
      stdout: 'http://example.invalid/x\n',
    });
  });

  it('keeps input order in batch mode and reports bad lines in jsonl without stopping', () => {
    const input =
      [
        'http://www.eff.org/',
        'not a url',
        '',
        'http://example.invalid/',
        'http://www.torproject.org/download/',
      ].join('\n') + '\n';
    const text = runCliSync(['rewrite'], { stdin: input });
    expect(text.stdout.split('\n').slice(0, 5)).toEqual([
      'https://www.eff.org/',
      'not a url',
      '',
      'http://example.invalid/',
      'https://www.torproject.org/download/',
    ]);
    const jsonl = runCliSync(['rewrite', '--format', 'jsonl'], { stdin: input });
    const records = jsonl.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toHaveLength(5);
    expect(records[0]).toEqual({
      url: 'http://www.eff.org/',
      rewritten: 'https://www.eff.org/',
      ruleset: 'EFF',
    });
    expect(records[1]).toMatchObject({ url: 'not a url', rewritten: null, ruleset: null });
    expect(records[1]?.['error']).toMatch(/not a valid URL/);
    expect(records[3]).toEqual({ url: 'http://example.invalid/', rewritten: null, ruleset: null });
  });

  it('--disable and --enable override rulesets by name, and unknown names are an error', () => {
    expect(runCliSync(['rewrite', '--disable', 'EFF', 'http://www.eff.org/']).stdout).toBe(
      'http://www.eff.org/\n',
    );
    const unknown = runCliSync(['rewrite', '--enable', 'No Such Ruleset', 'http://www.eff.org/']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/no loaded ruleset has that name/);
  });

  it('--explain names the candidates, the deciding rule or exclusion, and why', () => {
    const r = runCliSync([
      'rewrite',
      '--explain',
      'http://www.eff.org/',
      'http://example.invalid/',
    ]);
    expect(r.stdout).toMatch(
      /1\. EFF \(target [^)]+\): active, rule \d+ from="[^"]+" to="[^"]+" rewrote it to https:\/\/www\.eff\.org\//,
    );
    expect(r.stdout).toContain('no ruleset targets this host');
    const json = runCliSync(['rewrite', '--explain', '--format', 'jsonl', 'http://www.eff.org/']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      rewritten: 'https://www.eff.org/',
      ruleset: 'EFF',
      candidates: [{ ruleset: 'EFF', outcome: 'rewrote', active: true }],
    });
  });
});

describe('httpsify rewrite with --rules', () => {
  it('reports a broken ruleset with file and line on stderr and keeps using the others', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-rules-'));
    writeFileSync(
      join(dir, 'Good.xml'),
      '<ruleset name="Good">\n\t<target host="good.example" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n',
    );
    writeFileSync(
      join(dir, 'Bad.xml'),
      '<ruleset name="Bad">\n\t<target host="bad.example" />\n\t<rule from="^http://(bad" to="https://bad.example/" />\n</ruleset>\n',
    );
    writeFileSync(
      join(dir, 'Slow.xml'),
      '<ruleset name="Slow">\n\t<target host="slow.example" />\n\t<rule from="^http://slow\\.example/(a+)+$" to="https://slow.example/" />\n</ruleset>\n',
    );
    const r = runCliSync([
      'rewrite',
      '--rules',
      dir,
      'http://good.example/',
      'http://bad.example/',
      `http://slow.example/${'a'.repeat(40)}!`,
      'http://slow.example/aaa',
    ]);
    expect(r.status).toBe(0);
    // `(a+)+$` cannot be proven for a backtracking matcher, so it runs in linear time instead.
    expect(r.stdout).toBe(
      `https://good.example/\nhttp://bad.example/\nhttp://slow.example/${'a'.repeat(40)}!\nhttps://slow.example/\n`,
    );
    expect(r.stderr).toContain(`${join(dir, 'Bad.xml')}:3:2: error invalid-regex`);
    expect(r.stderr).not.toContain('Slow');
  });

  it('a missing --rules path is a clear error', () => {
    const r = runCliSync(['rewrite', '--rules', '/nonexistent/rules', 'http://a.example/']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('/nonexistent/rules: no such file or directory');
  });

  it(
    'agrees with every oracle URL through the CLI, XML corpus and compiled bundle, ',
    async () => {
      const input = oracle.map((c) => c.url).join('\n') + '\n';
      const fromXml = await runCli(['rewrite', '--rules', corpusRulesDir(), '--format', 'jsonl'], {
        stdin: input,
        timeout: CORPUS_RUN,
      });
      expect(fromXml.status).toBe(0);
      const records = fromXml.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { url: string; rewritten: string | null });
      expect(records).toHaveLength(oracle.length);
      const wrong = records.filter(
        (r, i) => r.url !== oracle[i]?.url || r.rewritten !== oracle[i]?.expected,
      );
      expect(wrong.slice(0, 10)).toEqual([]);

      const dir = mkdtempSync(join(tmpdir(), 'httpsify-bundle-'));
      const bundle = join(dir, 'corpus.bundle');
      const compiled = runCliSync(['compile', '--rules', corpusRulesDir(), '-o', bundle], {
        timeout: CORPUS_RUN,
      });
      // One corpus exclusion is refused by the regex door (raceforlife's cubic lookahead, see
      // docs/regex-guard.md): compile leaves its ruleset out and exits 1. No oracle URL needs it.
      expect(compiled.status).toBe(1);
      expect(compiled.stderr.match(/error unsafe-regex/g)).toHaveLength(1);
      expect(compiled.stderr).toMatch(/raceforlife.*cube of the input length/);
      expect(compiled.stderr).toMatch(/24263 rulesets, \d+ bytes/);
      const fromBundle = await runCli(['rewrite', '--rules', bundle, '--format', 'jsonl'], {
        stdin: input,
        timeout: CORPUS_RUN,
      });
      expect(fromBundle.stdout).toBe(fromXml.stdout);
      // Three corpus-wide runs and 165k URLs twice.
    },
    workTimeout(CORPUS_RULESETS, 20),
  );

  it('compile is deterministic and rejects a corrupt bundle on load', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-compile-'));
    const a = join(dir, 'a.bundle');
    const b = join(dir, 'b.bundle');
    expect(runCliSync(['compile', '-o', a]).status).toBe(0);
    expect(runCliSync(['compile', '-o', b]).status).toBe(0);
    expect(readFileSync(a).equals(readFileSync(b))).toBe(true);
    const corrupt = readFileSync(a);
    corrupt[corrupt.length - 50] = (corrupt[corrupt.length - 50] as number) ^ 0xff;
    writeFileSync(b, corrupt);
    const r = runCliSync(['rewrite', '--rules', b, 'http://www.eff.org/']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/b\.bundle: corrupt bundle: checksum mismatch/);
    writeFileSync(b, readFileSync(a).subarray(0, 1000));
    expect(runCliSync(['rewrite', '--rules', b, 'http://www.eff.org/']).stderr).toMatch(
      /truncated bundle: 1000 of \d+ bytes/,
    );
  });
});
