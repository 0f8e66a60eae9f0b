/** `npm run build:extension [-- --rules DIR ... --out DIR --no-zip --feedback]` */
import { parseArgs } from 'node:util';
import { formatDiagnostic } from '@httpsify/engine';
import { buildExtension } from './build.js';

const { values } = parseArgs({
  options: {
    rules: { type: 'string', multiple: true },
    out: { type: 'string' },
    'no-zip': { type: 'boolean' },
    feedback: { type: 'boolean' },
  },
});

const result = await buildExtension({
  rulesets: values.rules,
  outDir: values.out,
  zip: !values['no-zip'],
  feedback: values.feedback,
});
for (const d of result.diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
const r = result.dnr;
process.stdout.write(
  `${result.rulesetCount} rulesets; DNR: ${r.ruleCount} rules (${r.regexRuleCount}/${r.regexLimit} regex), ` +
    `${r.rulesetsComplete} rulesets complete, ${r.rulesetsPartial} partial, ${r.rulesetsSkipped} skipped\n`,
);
for (const [browser, dir] of Object.entries(result.dirs))
  process.stdout.write(`${browser}: ${dir}\n`);
for (const zip of result.zips) process.stdout.write(`package: ${zip}\n`);
