import type { CheckReport, FixReport } from '../../commands/check.js';
import type { TestReport } from '../../commands/test.js';

/** The fixes without the new texts (the files hold them once written). */
function fixesValue(fixes: FixReport): object {
  return { ...fixes, changed: fixes.changed.map(({ fixed: _f, ...rest }) => rest) };
}

/** `check --fix-dry-run --format json`: per file the fixes and the diff. */
export function fixesJson(fixes: FixReport): string {
  return `${JSON.stringify(fixesValue(fixes), null, 2)}\n`;
}

/**
 * `check --format json`: every finding with the counts, without what only --write-baseline needs;
 * after --fix also the fixes made.
 */
export function checkJson(report: CheckReport, fixed: FixReport | null): string {
  const { unfiltered: _u, hashes: _h, ...all } = report;
  return `${JSON.stringify(fixed === null ? all : { ...all, fixes: fixesValue(fixed) }, null, 2)}\n`;
}

/** `test --format json`: the rulesets tested and every finding, as check's. */
export function testJson(report: TestReport): string {
  const { unfiltered: _u, hashes: _h, ...shown } = report;
  return `${JSON.stringify(shown, null, 2)}\n`;
}
