import { describe, expect, it } from 'vitest';
import { linksMarkdown } from '../../src/formats/markdown.js';
import { linksReport } from './reports.js';

describe('Markdown format', () => {
  it('links: a GFM table with every cell escaped, the summary, problems and notes', () => {
    expect(linksMarkdown(linksReport(), 'check')).toBe(
      [
        '### httpsify links check',
        '',
        '| File:line | URL | Upgrade | Ruleset |',
        '| --- | --- | --- | --- |',
        '| `docs/a.md:3` | `http://example.com/` | `https://example.com/` | Example |',
        // A `|` cannot end the cell, a backtick cannot end the code span, "!" and "=" stay text.
        '| `docs/b\\|c.md:7` | ``http://odd.test/`x`` | ``https://odd.test/`x`` not verified: status 200 \\!\\= 404 | none (`--upgrade-all`) |',
        '',
        '2 file(s) scanned; 1 link(s) can be upgraded; 1 not verified; 1 link(s) excluded',
        '',
        'Not checked:',
        '',
        '- `docs/big.md`: larger than \\-\\-max\\-size',
        '',
        'Notes:',
        '',
        '- a \\*note\\*',
        '',
      ].join('\n'),
    );
  });

  it('links: no table when there is nothing to upgrade', () => {
    const report = { ...linksReport(), findings: [], excluded: [], problems: [], notes: [] };
    expect(linksMarkdown(report, 'fix')).toBe(
      '### httpsify links fix\n\nNo link was upgraded.\n\n2 file(s) scanned; 0 link(s) upgraded in 1 file(s)\n',
    );
  });
});
