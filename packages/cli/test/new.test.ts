import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lintRulesetSource, rulesetCoverage } from '@httpsify/engine/authoring';
import { corpusRulesDir } from '../../engine/test/support/corpus.js';
import { existingCoverage, runNew } from '../src/commands/new.js';
import { CORPUS_RULESETS, workTimeout } from '../../engine/test/support/work-timeout.js';

describe('httpsify new', () => {
  it('writes a trivial ruleset that passes check and test', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-new-'));
    const path = runNew('example.org', { www: true, dir });
    expect(path).toBe(join(dir, 'Example.org.xml'));
    const xml = readFileSync(path, 'utf8');
    expect(xml).toContain('<target host="example.org" />\n\t<target host="www.example.org" />');
    const lint = lintRulesetSource(xml, path);
    expect(lint.diagnostics).toEqual([]);
    expect(rulesetCoverage(lint.ruleset!).diagnostics).toEqual([]);
    expect(() => runNew('example.org', { dir })).toThrow(/already exists/);
  });
  it('refuses a host another ruleset already targets, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-new-'));
    writeFileSync(
      join(dir, 'Other.xml'),
      '<ruleset name="Other"><target host="*.example.net"/><rule from="^http:" to="https:"/></ruleset>',
    );
    expect(() => runNew('shop.example.net', { dir })).toThrow(
      /Other\.xml: target \*\.example\.net covers shop\.example\.net/,
    );
  });
  it('refuses a host a bundled default ruleset covers, unless --force', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-new-'));
    expect(() => runNew('en.wikipedia.org', { dir })).toThrow(
      /bundled with httpsify already targets this site:\n.*Wikipedia\.xml: target \*\.wikipedia\.org covers en\.wikipedia\.org/,
    );
    expect(readdirSync(dir)).toEqual([]);
    expect(runNew('en.wikipedia.org', { dir, force: true })).toBe(
      join(dir, 'En.wikipedia.org.xml'),
    );
  });
  it('refuses bad domains with a hint', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-new-'));
    expect(() => runNew('www.example.org', { dir })).toThrow(/--www/);
    expect(() => runNew('Example.org', { dir })).toThrow(/lower case: example\.org/);
    expect(() => runNew('https://example.org/x', { dir })).toThrow(/not a URL/);
  });
  it(
    'finds existing targets in the corpus',
    () => {
      expect(
        existingCoverage(corpusRulesDir(), ['collector.githubapp.com']).some((s) =>
          s.endsWith('Github.xml: target collector.githubapp.com covers collector.githubapp.com'),
        ),
      ).toBe(true);
    },
    workTimeout(CORPUS_RULESETS, 3),
  );
});

describe('httpsify new --dir', () => {
  it('names a missing or wrong --dir plainly, and writes nothing', () => {
    const root = mkdtempSync(join(tmpdir(), 'httpsify-new-dir-'));
    expect(() => runNew('example.com', { dir: join(root, 'nope'), force: true })).toThrow(
      `--dir ${join(root, 'nope')}: no such directory (create it first: mkdir -p ${join(root, 'nope')})`,
    );
    writeFileSync(join(root, 'file'), '');
    expect(() => runNew('example.com', { dir: join(root, 'file'), force: true })).toThrow(
      `--dir ${join(root, 'file')}: not a directory`,
    );
    expect(readdirSync(root)).toEqual(['file']);
  });
});
