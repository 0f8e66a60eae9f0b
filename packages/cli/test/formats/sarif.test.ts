import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findingsSarif } from '../../src/formats/sarif/findings.js';
import { linksSarif } from '../../src/formats/sarif/links.js';
import { DIAGNOSTICS, linksReport } from './reports.js';

interface Log {
  $schema: string;
  version: string;
  runs: {
    tool: { driver: { name: string; semanticVersion: string; rules: { id: string }[] } };
    originalUriBaseIds: Record<string, { uri: string }>;
    columnKind: string;
    invocations: { executionSuccessful: boolean; toolExecutionNotifications: unknown[] }[];
    results: Record<string, unknown>[];
  }[];
}

const parse = (text: string): Log['runs'][number] => {
  expect(text.endsWith('}\n')).toBe(true);
  const log = JSON.parse(text) as Log;
  expect([log.$schema, log.version]).toEqual([
    'https://json.schemastore.org/sarif-2.1.0.json',
    '2.1.0',
  ]);
  return log.runs[0]!;
};

// Relative paths in a report are relative to the working directory, as the commands give them.
const cwd = process.cwd();

describe('SARIF formats', () => {
  it('findings: a rule per code, a result per finding at its place, info as note', () => {
    const run = parse(findingsSarif(DIAGNOSTICS, cwd, '9.8.7'));
    expect(run.tool.driver.name).toBe('httpsify');
    expect(run.tool.driver.semanticVersion).toBe('9.8.7');
    expect(run.originalUriBaseIds['%SRCROOT%']).toEqual({ uri: `${pathToFileURL(cwd).href}/` });
    expect(run.tool.driver.rules.map((r) => r.id)).toEqual([
      'changes-domain',
      'to-missing-group',
      'unescaped-dot',
    ]);
    expect(run.results[2]).toEqual({
      ruleId: 'changes-domain',
      ruleIndex: 0,
      level: 'note',
      message: { text: 'moves to cdn' },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: 'rules/Cdn.xml', uriBaseId: '%SRCROOT%' },
            region: { startLine: 3, startColumn: 2 },
          },
        },
      ],
    });
    // ruleIndex right after ruleId, as code-scanning UIs list them.
    expect(Object.keys(run.results[0]!).slice(0, 3)).toEqual(['ruleId', 'ruleIndex', 'level']);
  });

  it('links: the upgrade as a fix, unverified links as notes, problems as notifications', () => {
    const run = parse(linksSarif(linksReport(), cwd, '0.1.0'));
    const [upgrade, unverified] = run.results;
    const region = { startLine: 3, startColumn: 5, endLine: 3, endColumn: 24 };
    const artifactLocation = { uri: 'docs/a.md', uriBaseId: '%SRCROOT%' };
    expect(upgrade).toEqual({
      ruleId: 'insecure-link',
      ruleIndex: 0,
      level: 'warning',
      message: {
        text: 'http://example.com/ can be upgraded to https://example.com/ (ruleset Example)',
      },
      locations: [{ physicalLocation: { artifactLocation, region } }],
      properties: {
        url: 'http://example.com/',
        rewritten: 'https://example.com/',
        ruleset: 'Example',
        context: 'see http://example.com/',
      },
      fixes: [
        {
          description: { text: 'Use https://example.com/' },
          artifactChanges: [
            {
              artifactLocation,
              replacements: [
                { deletedRegion: region, insertedContent: { text: 'https://example.com/' } },
              ],
            },
          ],
        },
      ],
    });
    expect(unverified?.['ruleId']).toBe('insecure-link-not-verified');
    expect(unverified?.['level']).toBe('note');
    expect(unverified?.['fixes']).toBeUndefined();
    expect(
      (unverified?.['locations'] as Log['runs'][number]['results'])[0]?.['physicalLocation'],
    ).toMatchObject({ artifactLocation: { uri: 'docs/b%7Cc.md' } });
    // A skipped file is a note; the run itself succeeded.
    expect(run.invocations[0]).toEqual({
      executionSuccessful: true,
      toolExecutionNotifications: [
        {
          level: 'note',
          message: { text: 'docs/big.md: larger than --max-size' },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: 'docs/big.md', uriBaseId: '%SRCROOT%' },
              },
            },
          ],
        },
      ],
    });
  });
});
