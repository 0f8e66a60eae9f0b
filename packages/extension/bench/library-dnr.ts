/**
 * `npm run bench:library`: how much of the 2018 HTTPS Everywhere library Chromium applies once
 * imported. The files go through the import's own door (parse, regex door, bundle), the bundle is
 * loaded as the background loads it, and its default-on rulesets are compiled the way the
 * background compiles the library, into what a fresh install's other dynamic rules leave free:
 * the settings' rules (HTTPS-first on), the build's handoff rules, and the known-HTTPS-hosts
 * rules at their largest (one regex per label count). Prints the rulesets applied fully, the
 * rules by kind against Chromium's limits, and how the rules do on the public oracle's URLs
 * (as subresources: main frames of the rest go to the handoff page).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBundle } from '@httpsify/engine';
import { compileDnr, DNR_LIMITS, measureDnrCoverage } from '@httpsify/engine/dnr';
import { defaultRulesetsDir, loadRulesets } from '@httpsify/engine/node';
import { REGEX_RESERVED_FOR_SETTINGS } from '../src/channels/channel-dnr.js';
import { handoffRules, handoffScope } from '../src/dnr/handoff-rules.js';
import { compileLibrary } from '../src/library/library-compile.js';
import { compileLibraryRules } from '../src/library/library-dnr.js';
import { uiDnrRules } from '../src/dnr/settings-rules.js';
import { knownHttpsRules, MAX_LABELS } from '../src/protection/protection-dnr.js';
import { usageOf } from '../src/dnr/rules.js';
import { corpusRulesDir, readOracle } from '../../engine/test/support/corpus.js';

const dir = corpusRulesDir();
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.xml'))
  .map((f) => ({ path: `rules/${f}`, text: readFileSync(join(dir, f), 'utf8') }));

let t = performance.now();
const library = await compileLibrary(files, () => undefined);
const importMs = performance.now() - t;
const engine = loadBundle(library.bundle);
const active = [];
for (let id = 0; id < engine.rulesetCount; id++)
  if (engine.isActive(id)) active.push(engine.ruleset(id));

// A fresh install's other dynamic rules.
const defaults = loadRulesets([defaultRulesetsDir()]).rulesets;
const scope = handoffScope(defaults, compileDnr(defaults, { trailingDots: true }).report.omissions);
const others = usageOf([
  ...uiDnrRules({
    globalEnabled: true,
    disabledSites: [],
    httpAllowedSites: [],
    httpOnceHosts: [],
    userRulesets: [],
    httpsFirst: true,
    extensionId: 'abcdefghijklmnopabcdefghijklmnop',
  }).rules,
  ...handoffRules(scope, 'chrome-extension://abcdefghijklmnopabcdefghijklmnop/ui/handoff.html'),
  ...knownHttpsRules(
    Array.from({ length: MAX_LABELS - 1 }, (_, i) =>
      Array.from({ length: i + 2 }, () => 'a').join('.'),
    ),
  ),
]);
const free = {
  rules: DNR_LIMITS.dynamicRules - others.rules,
  regexRules: DNR_LIMITS.regexRules - REGEX_RESERVED_FOR_SETTINGS - others.regexRules,
  unsafeRules: DNR_LIMITS.unsafeDynamicRules - others.unsafeRules,
};

t = performance.now();
const compiled = compileLibraryRules(
  active,
  free,
  'chrome-extension://abcdefghijklmnopabcdefghijklmnop/ui/handoff.html',
);
const dnrMs = performance.now() - t;
if (!compiled.ok) throw new Error(compiled.reason);
const used = usageOf(compiled.rules);
const incomplete = compiled.incomplete ?? [];
const full = active.length - incomplete.length;
const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(2)}%`;
const row = (what: string, n: number, limit: number) =>
  console.log(`  ${what.padEnd(22)} ${String(n).padStart(7)} / ${limit}`);

console.log(
  `library: ${files.length} files, ${library.rulesetCount} rulesets imported, ${active.length} on by default`,
);
console.log(
  `import (parse, regex door, bundle): ${(importMs / 1000).toFixed(1)} s; Chromium rules compiled in ${(dnrMs / 1000).toFixed(1)} s`,
);
console.log(
  `applied fully on Chromium: ${full} of ${active.length} default-on rulesets (${pct(full, active.length)})`,
);
console.log(
  `the other ${incomplete.length}: page loads only (through the handoff page) ${compiled.coverage?.pageLoadsOnly.length ?? 0}, ` +
    `in part ${compiled.coverage?.inPart.length ?? 0}`,
);
console.log("dynamic rules (library / free after a fresh install's other rules):");
row('all rules', used.rules, free.rules);
row('regex rules', used.regexRules, free.regexRules);
row('redirects', used.unsafeRules, free.unsafeRules);

const oracle = await readOracle();
// Subresources: the handoff rule only takes main frames.
const subresourceRules = compiled.rules.filter(
  (r) => !r.condition.resourceTypes?.every((t) => t === 'main_frame'),
);
const c = measureDnrCoverage(subresourceRules, oracle, 0, { asBrowser: true });
console.log(
  `public oracle, as subresources: ${c.reproduced} of ${c.rewrites} rewrites reproduced (${pct(c.reproduced, c.rewrites)}); ` +
    `${c.wrong} wrong, ${c.spurious} URLs changed that the reference leaves alone`,
);
