/**
 * Fingerprints of the DNR compiler's output (corpus, default rulesets, overrides, a tight regex
 * budget), to show a refactoring leaves it byte-identical: run before and after, compare.
 *   npm run build && npx tsx packages/engine/bench/dnr-output-hash.ts <dir of corpus rules/*.xml>
 */
import { createHash } from 'node:crypto';
import { loadRulesets, defaultRulesetsDir } from '@httpsify/engine/node';
import { compileDnr, compileDnrOverrides } from '@httpsify/engine/dnr';
const dir = process.argv[2]!;
const h = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 16);
const corpus = loadRulesets([dir]).rulesets;
const c = compileDnr(corpus);
const d = compileDnr(loadRulesets([defaultRulesetsDir()]).rulesets);
const o = compileDnrOverrides(corpus.slice(0, 300), corpus.slice(300, 600));
const u = compileDnr(corpus.slice(0, 2000), { isActive: () => true, regexLimit: 150 });
console.log('corpus', h(c), 'defaults', h(d), 'overrides', h(o), 'budget150', h(u));
