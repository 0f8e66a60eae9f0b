import type { DnrCompileResult, DnrCoverage, TrailingDotCoverage } from '@httpsify/engine/dnr';

function percent(n: number, d: number): string {
  return d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(2)}%`;
}

/**
 * `dnr --report` (and `--oracle`): the counts, the limits passed, how much of the oracle the rules
 * reproduce, and with `--report` every ruleset, rule or exclusion left out, and why.
 */
export function dnrText(
  { report }: DnrCompileResult,
  coverage: DnrCoverage | undefined,
  details: boolean,
  browserCoverage?: DnrCoverage,
  dotted?: TrailingDotCoverage,
): string {
  const lines: string[] = [];
  const actions = Object.entries(report.byAction)
    .map(([a, n]) => `${n} ${a}`)
    .join(', ');
  lines.push(`rules: ${report.ruleCount} (${actions})`);
  lines.push(`regex rules: ${report.regexRuleCount} of ${report.regexLimit}`);
  lines.push(
    `rulesets: ${report.rulesetsConsidered} active; ${report.rulesetsComplete} complete, ${report.rulesetsPartial} partial, ${report.rulesetsSkipped} left out`,
  );
  for (const over of report.overLimits) lines.push(`OVER LIMIT: ${over}`);
  if (coverage) {
    lines.push(
      `oracle: ${coverage.reproduced} of ${coverage.rewrites} rewrites reproduced (${percent(coverage.reproduced, coverage.rewrites)}); ` +
        `${coverage.missed} missed, ${coverage.wrong} different, ${coverage.spurious} rewritten where the reference does not (${coverage.cases} URLs)`,
    );
  }
  if (browserCoverage) {
    const b = browserCoverage;
    lines.push(
      `oracle as the browser sends it (canonical, no fragment): ${b.reproduced} of ${b.rewrites} rewrites reproduced (${percent(b.reproduced, b.rewrites)}); ` +
        `${b.missed} missed, ${b.wrong} different, ${b.spurious} rewritten where the reference does not`,
    );
  }
  if (dotted) {
    lines.push(
      `oracle with a trailing dot on the host, as subresources: ${dotted.reproduced} of ${dotted.rewrites} rewrites reproduced (${percent(dotted.reproduced, dotted.rewrites)}); ` +
        `${dotted.missed} missed, ${dotted.wrong} different, ${dotted.spurious} rewritten where the reference does not; ` +
        `${dotted.dotOnly} of ${dotted.cases} only lost the dot`,
    );
  }
  if (details) {
    if (report.omissions.length > 0) lines.push('', 'not compiled:');
    for (const o of report.omissions) {
      const where = o.file !== undefined ? `${o.file}:${o.line ?? 0}: ` : '';
      lines.push(
        `${where}${o.ruleset}: ${o.what}${o.what === 'ruleset' ? '' : ` #${o.index + 1}`} ${JSON.stringify(o.source)}: ${o.reason}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
