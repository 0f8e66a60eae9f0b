import { count } from '../../shared/plural.js';
import type { SweepOutcome } from '../../sweep/run-sweep.js';
import { URL_VERDICTS, VERDICT_WORDS } from '../../sweep/verdicts.js';

/** The terminal summary: counts, the worst rulesets, where the files are. */
export function sweepText(outcome: SweepOutcome): string {
  const s = outcome.summary;
  const unit = s.kind === 'discover' ? 'host' : 'ruleset';
  const lines = [
    `swept ${count(s.urls, 'URL')} of ${count(s.rulesets.length, unit)}` +
      (outcome.resumedFrom > 0
        ? ` (${outcome.resumedFrom} from an earlier run, ${outcome.ranNow} now)`
        : '') +
      `: ${s.byHealth.ok} work, ${s.byHealth.warning} with warnings, ${s.byHealth.failing} failing, ${s.byHealth.unknown} not judged`,
    `  ${URL_VERDICTS.filter((v) => s.byVerdict[v] > 0)
      .map((v) => `${VERDICT_WORDS[v]} ${s.byVerdict[v]}`)
      .join(', ')}`,
  ];
  const worst = s.rulesets
    .filter((r) => r.health === 'failing')
    .sort((a, b) => b.failingUrls - a.failingUrls)
    .slice(0, 5);
  if (s.kind === 'ruleset' && worst.length > 0) {
    lines.push('worst:');
    for (const r of worst)
      lines.push(`  ${r.name} (${r.failingUrls} of ${r.urls} URLs fail): ${r.reasons[0] ?? ''}`);
  }
  if (outcome.discovery !== null) {
    lines.push(
      `discovery: ${outcome.discovery.covered} hosts already covered, ${outcome.discovery.bad} bad lines, ${count(outcome.discovered.length, 'new ruleset')} written`,
    );
  }
  const wb = outcome.writeBack;
  if (wb !== null) {
    lines.push(
      `--write: ${wb.disabled.length} turned off, ${wb.enabled.length} turned back on, ${wb.unconfirmed.length} failing but not yet confirmed by an earlier sweep`,
    );
    for (const e of wb.errors) lines.push(`  ${e}`);
  }
  lines.push(
    `results: ${outcome.resultsPath}`,
    `report: ${outcome.reportPath}`,
    `summary: ${outcome.summaryPath}`,
  );
  return lines.join('\n');
}

/** `sweep --queue`: how many results each worker stored. */
export function sweepWorkersLine(perWorker: Readonly<Record<string, number>>): string {
  return `per worker: ${Object.entries(perWorker)
    .map(([w, n]) => `${w} ${n}`)
    .join(', ')}`;
}
