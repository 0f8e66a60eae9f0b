/**
 * The oracle rewrites the static DNR rules miss (as the browser sends the URLs, trailing-dot
 * rules on, as the extension build compiles), counted by cause: the first report entry of the
 * ruleset the reference used (the ruleset left out, else its first omitted rule or exclusion).
 * Says where the regex budget and the translation lose coverage; a few URLs per cause.
 * `2018` and `2021` name the shared corpus's libraries. `--self-oracle` (implied by `2021`, which
 * has no oracle): the reference is the engine's own rewrites of the URLs the public oracle is
 * made of, every `<test url>` and `http://<host>/` of every target without a wildcard.
 * Last, the same URLs with a path and query added, the engine as the reference: URLs none of
 * the compiler's choices (the regex budget ranks rulesets by those sample URLs) has seen.
 *   npm run bench:dnr (both libraries)
 *   npm run build && npx tsx packages/engine/bench/dnr-misses.ts <2018|2021|rules dir> [--self-oracle]
 */
import { loadRulesets } from '@httpsify/engine/node';
import {
  compileDnr,
  DnrEmulator,
  measureDnrCoverage,
  type DnrOmission,
} from '@httpsify/engine/dnr';
import { libraryRulesDir, readOracle, type OracleCase } from '../test/support/corpus.js';

const arg = process.argv[2];
if (arg === undefined)
  throw new Error('usage: dnr-misses.ts <2018|2021|dir of rules/*.xml> [--self-oracle]');
const dir = arg === '2018' || arg === '2021' ? libraryRulesDir(Number(arg) as 2018 | 2021) : arg;
const selfOracle = process.argv.includes('--self-oracle') || arg === '2021';
console.log(`${arg}${selfOracle ? ', the engine as the reference' : ''}`);
const { engine, rulesets } = loadRulesets([dir]);
const started = performance.now();
const { rules, report } = compileDnr(rulesets, { trailingDots: true });
const compileMs = performance.now() - started;
const emulator = new DnrEmulator(rules);
const withoutFragment = (url: string): string => {
  const u = new URL(url);
  u.hash = '';
  return u.href;
};
const omitted = new Map<string, DnrOmission[]>();
for (const o of report.omissions) omitted.set(o.ruleset, [...(omitted.get(o.ruleset) ?? []), o]);

/** The reason a ruleset's rewrite is missed, without its pattern-specific details. */
function causeOf(ruleset: string | null, engineRewrites: boolean): string {
  const list = ruleset === null ? [] : (omitted.get(ruleset) ?? []);
  if (list.length === 0)
    return engineRewrites
      ? 'ruleset compiled whole (another rule takes the URL)'
      : 'engine leaves the canonical URL alone';
  const first =
    list.find((o) => o.what === 'ruleset' && o.reason !== 'no rule could be translated') ??
    list.find((o) => o.what !== 'ruleset' && !/^follows a rule/.test(o.reason)) ??
    list[0]!;
  return `${first.what}: ${first.reason.replace(/; widened to .*/, '; widened')}`;
}

function engineOracle(): OracleCase[] {
  const urls = new Set<string>();
  for (const rs of rulesets) {
    for (const test of rs.tests) urls.add(test.url);
    for (const t of rs.targets) if (!t.host.includes('*')) urls.add(`http://${t.host}/`);
  }
  return [...urls].map((url) => ({ url, expected: engine.rewrite(url) }));
}

const oracle = selfOracle ? engineOracle() : await readOracle();
const causes = new Map<string, { count: number; examples: string[] }>();
let rewrites = 0;
let reproduced = 0;
let wrong = 0;
let spurious = 0;
for (const c of oracle) {
  const url = withoutFragment(c.url);
  const got = emulator.match({ url, type: 'main_frame' }).redirectUrl;
  if (c.expected === null) {
    if (got !== null) spurious++;
    continue;
  }
  rewrites++;
  if (got !== null) {
    if (withoutFragment(got) === withoutFragment(c.expected)) reproduced++;
    else wrong++;
    continue;
  }
  const reference = engine.rewriteWithRuleset(url);
  const cause = causeOf(reference.ruleset, reference.rewritten !== null);
  const entry = causes.get(cause) ?? { count: 0, examples: [] };
  entry.count++;
  if (entry.examples.length < 3) entry.examples.push(`${reference.ruleset ?? '-'}: ${url}`);
  causes.set(cause, entry);
}
console.log(
  `rules: ${report.ruleCount}, regex rules: ${report.regexRuleCount} of ${report.regexLimit}; ` +
    `compiled in ${(compileMs / 1000).toFixed(1)} s`,
);
console.log(
  `${reproduced} of ${rewrites} rewrites reproduced (${((100 * reproduced) / rewrites).toFixed(3)}%), ` +
    `${rewrites - reproduced - wrong} missed, ${wrong} different, ${spurious} spurious; missed by cause:`,
);
for (const [cause, { count, examples }] of [...causes].sort((a, b) => b[1].count - a[1].count)) {
  console.log(`${String(count).padStart(6)}  ${cause}`);
  for (const e of examples) console.log(`          ${e}`);
}

const unseen = oracle.map(({ url }) => {
  const u = new URL(url);
  u.hash = '';
  const variant = `${u.href}${u.search === '' ? 'a/b.png?x=1&y=2' : '&z=1'}`;
  return { url: variant, expected: engine.rewrite(variant) };
});
const v = measureDnrCoverage(rules, unseen, 0, { asBrowser: true });
console.log(
  `with a path and query added (the engine as the reference): ${v.reproduced} of ${v.rewrites} ` +
    `reproduced (${((100 * v.reproduced) / v.rewrites).toFixed(3)}%), ${v.wrong} different, ` +
    `${v.spurious} spurious`,
);
