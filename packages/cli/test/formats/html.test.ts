import { describe, expect, it } from 'vitest';
import { sweepHtml } from '../../src/formats/html.js';
import { sweepSummary } from './reports.js';

describe('HTML format', () => {
  it('sweep: one page with the counts, the chart, the worst rulesets, all escaped', () => {
    const lines = sweepHtml(sweepSummary(), null, 'sweep <1>').split('\n');
    expect(lines.slice(0, 2)).toEqual([
      '<!doctype html>',
      '<html lang="en"><head><meta charset="utf-8"><title>sweep &lt;1&gt;</title>',
    ]);
    expect(lines.slice(8)).toEqual([
      '<h1>sweep &lt;1&gt;</h1>',
      '<p>4 URLs of 2 rulesets, swept 2026-01-02 03:04:05 UTC to 2026-01-02 03:09:05 UTC.</p>',
      '<h2>Rulesets</h2><ul class="health">' +
        '<li><span class="dot" style="background:#c62828"></span>1 failing</li>' +
        '<li><span class="dot" style="background:#b26a00"></span>0 works with warnings</li>' +
        '<li><span class="dot" style="background:#2e7d32"></span>1 works</li>' +
        '<li><span class="dot" style="background:#757575"></span>0 not judged</li></ul>',
      '<h2>URLs per verdict</h2><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="URLs per verdict" width="730" height="44" font-size="13" font-family="sans-serif">' +
        '<text x="222" y="15" text-anchor="end">works</text><rect x="230" y="3" width="420" height="16" fill="#2e7d32"/><text x="656" y="15">3</text>' +
        '<text x="222" y="37" text-anchor="end">HTTPS timed out</text><rect x="230" y="25" width="140" height="16" fill="#c62828"/><text x="376" y="37">1</text></svg>',
      '<h2>Worst offenders</h2><table><tr><th>ruleset</th><th>failing URLs</th><th>why</th></tr>' +
        '<tr><td>A&lt;b&gt;</td><td>1 of 2</td><td>HTTPS timed out: http://a.test/ (10 s)</td></tr></table>',
      '<h2>Since the previous sweep</h2><p>No previous sweep to compare with (give one with <code>--previous</code>).</p>',
      '</body></html>',
      '',
    ]);
  });

  it('sweep: what changed since the previous sweep', () => {
    const previous = { ...sweepSummary(), rulesets: sweepSummary().rulesets.slice(1) };
    const html = sweepHtml(sweepSummary(), previous);
    expect(html).toContain('<title>httpsify sweep</title>');
    expect(html).toContain(
      '<h2>Since the previous sweep</h2><p>1 rulesets changed since the sweep of 2026-01-02 03:09:05 UTC.</p>' +
        '<table><tr><th>ruleset</th><th>before</th><th>now</th></tr><tr><td>A&lt;b&gt;</td><td>not swept</td><td>failing</td></tr></table>',
    );
  });
});
