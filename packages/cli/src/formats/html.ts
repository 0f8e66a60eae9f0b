import { diffSummaries, type SweepSummary } from '../sweep/summary.js';
import { severityOf, URL_VERDICTS, VERDICT_WORDS, type Severity } from '../sweep/verdicts.js';

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const COLOURS: Record<Severity, string> = {
  ok: '#2e7d32',
  warning: '#b26a00',
  failing: '#c62828',
  unknown: '#757575',
};
const HEALTH_WORDS: Record<Severity | 'absent', string> = {
  ok: 'works',
  warning: 'works with warnings',
  failing: 'failing',
  unknown: 'not judged',
  absent: 'not swept',
};
const MAX_ROWS = 200;

/** A horizontal bar chart of URLs per verdict, as inline SVG (no script, no external file). */
function verdictChart(summary: SweepSummary): string {
  const rows = URL_VERDICTS.filter((v) => summary.byVerdict[v] > 0);
  const max = rows.reduce((m, v) => Math.max(m, summary.byVerdict[v]), 1);
  const rowH = 22;
  const labelW = 230;
  const barW = 420;
  const bars = rows
    .map((v, i) => {
      const n = summary.byVerdict[v];
      const w = Math.max(1, Math.round((n / max) * barW));
      const y = i * rowH;
      return (
        `<text x="${labelW - 8}" y="${y + 15}" text-anchor="end">${esc(VERDICT_WORDS[v])}</text>` +
        `<rect x="${labelW}" y="${y + 3}" width="${w}" height="${rowH - 6}" fill="${COLOURS[severityOf(v)]}"/>` +
        `<text x="${labelW + w + 6}" y="${y + 15}">${n}</text>`
      );
    })
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="URLs per verdict" width="${labelW + barW + 80}" height="${Math.max(1, rows.length) * rowH}" font-size="13" font-family="sans-serif">${bars}</svg>`;
}

/** The one-file report a maintainer reads at a glance. */
export function sweepHtml(
  summary: SweepSummary,
  previous: SweepSummary | null,
  title = 'httpsify sweep',
): string {
  const when = (ms: number): string =>
    ms > 0
      ? new Date(ms)
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d+Z$/, ' UTC')
      : '—';
  const health = (['failing', 'warning', 'ok', 'unknown'] as const)
    .map(
      (h) =>
        `<li><span class="dot" style="background:${COLOURS[h]}"></span>${summary.byHealth[h]} ${esc(HEALTH_WORDS[h])}</li>`,
    )
    .join('');
  const worst = summary.rulesets
    .filter((r) => r.health === 'failing')
    .sort((a, b) => b.failingUrls - a.failingUrls || b.urls - a.urls)
    .slice(0, 25)
    .map(
      (r) =>
        `<tr><td>${esc(r.name)}</td><td>${r.failingUrls} of ${r.urls}</td><td>${r.reasons.map(esc).join('<br>')}</td></tr>`,
    )
    .join('');
  let changes = '<p>No previous sweep to compare with (give one with <code>--previous</code>).</p>';
  if (previous !== null) {
    const diff = diffSummaries(previous, summary).changed;
    const rows = diff
      .slice(0, MAX_ROWS)
      .map(
        (c) =>
          `<tr><td>${esc(c.name)}</td><td>${esc(HEALTH_WORDS[c.before])}</td><td>${esc(HEALTH_WORDS[c.after])}</td></tr>`,
      )
      .join('');
    changes =
      diff.length === 0
        ? `<p>Nothing changed since the sweep of ${when(previous.finishedAt)}.</p>`
        : `<p>${diff.length} rulesets changed since the sweep of ${when(previous.finishedAt)}${diff.length > MAX_ROWS ? ` (first ${MAX_ROWS} shown)` : ''}.</p>` +
          `<table><tr><th>ruleset</th><th>before</th><th>now</th></tr>${rows}</table>`;
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>
body{font-family:sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
ul.health{list-style:none;padding:0;display:flex;gap:2em;font-size:1.2em}.dot{display:inline-block;width:.8em;height:.8em;border-radius:50%;margin-right:.4em}
td:nth-child(3){word-break:break-all}
</style></head><body>
<h1>${esc(title)}</h1>
<p>${summary.urls} URLs of ${summary.rulesets.length} ${summary.kind === 'discover' ? 'hosts' : 'rulesets'}, swept ${when(summary.startedAt)} to ${when(summary.finishedAt)}.</p>
<h2>Rulesets</h2><ul class="health">${health}</ul>
<h2>URLs per verdict</h2>${verdictChart(summary)}
<h2>Worst offenders</h2>${worst === '' ? '<p>No ruleset fails.</p>' : `<table><tr><th>ruleset</th><th>failing URLs</th><th>why</th></tr>${worst}</table>`}
<h2>Since the previous sweep</h2>${changes}
</body></html>
`;
}
