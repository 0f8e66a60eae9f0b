import type { ProtectionSnapshot } from '../../src/decision/snapshot.js';
/**
 * The differential between decide() and Chromium's rules (issue 37): a "world" of settings and
 * learned state, every rule the extension would write for it (static rulesets, settings, user
 * rules, handoff, ruleset switches, loops, known hosts), and for one request the outcome each
 * side gives. Shared by
 * the fixed-seed test, `npm run fuzz` and the real-Chromium sample.
 */
import { createEngine, type Engine, type Ruleset } from '@httpsify/engine';
import {
  compileDnr,
  DNR_LIMITS,
  DnrEmulator,
  type DnrResourceType,
  type DnrRule,
} from '@httpsify/engine/dnr';
import { parseRulesetXml } from '@httpsify/engine/parse';
import fc from 'fast-check';
import { decide, type Decision, type DecisionState } from '../../src/decision/decide.js';
import { loopAllowRules } from '../../src/https-first/loop-rules.js';
import { overrideRules } from '../../src/dnr/override-rules.js';
import type { RuleBody } from '../../src/dnr/rules.js';
import { tabOnceRules, uiDnrRules } from '../../src/dnr/settings-rules.js';
import {
  decideHandoff,
  handoffAddress,
  handoffRules,
  handoffScope,
} from '../../src/dnr/handoff-rules.js';
import { ProtectionRuntime } from '../../src/protection/protection-runtime.js';
import { SiteList } from '../../src/site-rules/site-pattern.js';
import { DIFF_RULESETS, DIFF_USER_RULESET } from './hostile-urls.js';

export const EXTENSION_ID = 'abcdefghijklmnopabcdefghijklmnop';
export const HANDOFF_URL = `chrome-extension://${EXTENSION_ID}/ui/handoff.html`;

/** Settings and learned state: everything that relaxes protection, and what upgrades. */
export interface World {
  globalEnabled: boolean;
  httpsFirst: boolean;
  disabledSites: string[];
  httpAllowedSites: string[];
  httpOnce: string[];
  /** "Open over HTTP" for tab LOOP_TAB only (a sign-in network's fallback page). */
  httpOnceTab: string[];
  loop: string[];
  known: string[];
  userRules: boolean;
  /** Default rulesets the user switched off (by name). */
  switchedOff: string[];
}

const ENTRIES = [
  'site.test',
  '*.site.test',
  'site.test:8080',
  'plain.test',
  'bank.test',
  'www.bank.test:8080',
  '*.bank.test',
  '127.0.0.1',
  '[::1]:8443',
  'xn--bnk-qla.test',
  'intranet',
  'shop.test',
];
const subset = (pool: readonly string[], maxLength = 3) =>
  fc.uniqueArray(fc.constantFrom(...pool), { maxLength });

/** Worlds where `focus` is always present (the layer under test), the rest drawn at random. */
export function worlds(
  focus: 'sites' | 'once' | 'loops' | 'local' | 'user' | 'known' | 'switches',
): fc.Arbitrary<World> {
  const some = (on: boolean, pool: readonly string[]) =>
    on ? subset(pool).filter((l) => l.length > 0) : subset(pool, 2);
  return fc.record({
    globalEnabled: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, fc.constant(false)),
    httpsFirst: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, fc.constant(false)),
    disabledSites: some(focus === 'sites', ENTRIES),
    httpAllowedSites: some(focus === 'sites', ENTRIES),
    httpOnce: some(focus === 'once', [
      'once.test',
      'bank.test',
      'site.test',
      'shop.test',
      'localhost',
    ]),
    httpOnceTab: some(focus === 'once', [
      'tab.test',
      'bank.test',
      'site.test',
      'a.site.test',
      'known.test',
    ]),
    loop:
      focus === 'loops'
        ? subset(['loop.test', 'bank.test', 'www.shop.test']).filter((l) => l.length > 0)
        : fc.constant([]),
    known: some(focus === 'known', [
      'known.test',
      'bank.test',
      'site.test',
      'a.site.test',
      'other.test',
    ]),
    userRules: focus === 'user' ? fc.constant(true) : fc.boolean(),
    switchedOff: some(focus === 'switches', RULESET_NAMES),
  });
}

function parse(xml: string): Ruleset {
  const { ruleset } = parseRulesetXml(xml, 'differential.xml');
  if (ruleset === null || ruleset === undefined)
    throw new Error(`test ruleset does not parse: ${xml}`);
  return ruleset;
}

const DEFAULTS = DIFF_RULESETS.map(parse);
const USER = parse(DIFF_USER_RULESET);
const RULESET_NAMES = DEFAULTS.map((r) => r.name);
const engines = new Map<string, Engine>();
/** The default rulesets with the world's switches (one engine per set of switches). */
function defaultsEngine(w: World): Engine {
  const key = [...w.switchedOff].sort().join('\n');
  let e = engines.get(key);
  if (e === undefined) {
    e = createEngine(DEFAULTS);
    for (const name of w.switchedOff) e.setActive(name, false);
    engines.set(key, e);
  }
  return e;
}
const userEngine: Engine = createEngine([USER]);
// As the build compiles the static defaults.
const compiledDefaults = compileDnr([...DEFAULTS], { isActive: () => true, trailingDots: true });
const staticRules: RuleBody[] = compiledDefaults.rules;
const handoff: RuleBody[] = handoffRules(
  handoffScope(DEFAULTS, compiledDefaults.report.omissions),
  HANDOFF_URL,
);

/** The tab loop verdicts name; requests in other tabs (or none, -1) must not meet them. */
export const LOOP_TAB = 1;
/**
 * A loop verdict is one URL in one tab, as its page or as a subresource: for each looping host,
 * its root and one page as pages, that page and an image as subresources.
 */
export function loopVerdicts(
  w: World,
): { kind: 'navigation' | 'subresource'; tabId: number; url: string }[] {
  return w.loop.flatMap((h) => [
    ...[`http://${h}/`, `http://${h}/p?q=1`].map((url) => ({
      kind: 'navigation' as const,
      tabId: LOOP_TAB,
      url,
    })),
    ...[`http://${h}/p?q=1`, `http://${h}/i.png`].map((url) => ({
      kind: 'subresource' as const,
      tabId: LOOP_TAB,
      url,
    })),
  ]);
}

export function decisionState(w: World): DecisionState {
  const disabled = new SiteList(w.disabledSites);
  const allowed = new SiteList(w.httpAllowedSites);
  const user = w.userRules ? userEngine : null;
  return {
    globalEnabled: w.globalEnabled,
    httpsFirst: w.httpsFirst,
    siteOffBy: (url) => disabled.matchUrl(url),
    httpAllowedBy: (url) => allowed.matchUrl(url),
    httpOnce: (host, tabId) =>
      w.httpOnce.includes(host) || (tabId === LOOP_TAB && w.httpOnceTab.includes(host)),
    // As the guard answers (LoopGuard.allows): the URL without its fragment, which never reaches the network.
    loopVerdict: (url, tabId, kind) =>
      tabId === LOOP_TAB &&
      loopVerdicts(w).some((v) => v.kind === kind && v.url === url.replace(/#.*$/s, '')),
    userRewrite: (url) => {
      const r = user?.rewriteWithRuleset(url);
      return r?.rewritten ? { rewritten: r.rewritten, ruleset: r.ruleset } : null;
    },
    rewrite: (url) => {
      const r = user?.rewriteWithRuleset(url);
      if (r?.rewritten) return { rewritten: r.rewritten, ruleset: r.ruleset };
      const d = defaultsEngine(w).rewriteWithRuleset(url);
      return { rewritten: d.rewritten, ruleset: d.ruleset };
    },
    excludedBy: (url) => user?.excludedBy(url) ?? defaultsEngine(w).excludedBy(url),
    knownHttps: (host) => w.known.includes(host),
  };
}

/** Every rule the extension writes in this world, numbered. */
export function worldRules(w: World): DnrRule[] {
  const settings = uiDnrRules({
    globalEnabled: w.globalEnabled,
    httpsFirst: w.httpsFirst,
    disabledSites: w.disabledSites,
    httpAllowedSites: w.httpAllowedSites,
    httpOnceHosts: w.httpOnce,
    userRulesets: w.userRules ? [USER] : [],
    extensionId: EXTENSION_ID,
  }).rules;
  const rt = new ProtectionRuntime({
    storage: { get: async () => ({}), set: async () => undefined },
  });
  for (const host of w.known)
    rt.learn({ url: `https://${host}/`, tabId: 1, type: 'main_frame', statusCode: 200 }, undefined);
  const disabled = new SiteList(w.disabledSites);
  const allowed = new SiteList(w.httpAllowedSites);
  const state = decisionState(w);
  const view: ProtectionSnapshot = {
    globalEnabled: w.globalEnabled,
    httpsFirst: w.httpsFirst,
    disabled,
    httpAllowed: allowed,
    httpOnce: new Set(w.httpOnce),
    httpOnceInTabs: new Map(),
    userRules: null,
    rulesets: {
      rewrite: (url: string) => state.rewrite(url),
      excludedBy: (url: string) => state.excludedBy(url),
    },
    loopVerdict: () => false,
    dnr: {
      disabledSites: w.disabledSites,
      httpAllowedSites: w.httpAllowedSites,
      activeUserRulesets: [],
    },
  };
  const overrides = overrideRules(defaultsEngine(w), HANDOFF_URL, DNR_LIMITS.regexRules).rules;
  const tabOnce = tabOnceRules(
    w.httpOnceTab.map((h): [number, string] => [LOOP_TAB, h]),
    w.globalEnabled && w.httpsFirst,
  );
  const all: RuleBody[] = [
    ...staticRules,
    ...overrides,
    ...settings,
    ...tabOnce,
    ...handoff,
    ...loopAllowRules(loopVerdicts(w)),
    ...(rt.rules(view) ?? []),
  ];
  return all.map((r, i) => ({ ...r, id: i + 1 }) as DnrRule);
}

/**
 * A fixed pool of worlds per layer: building every rule and its emulator costs far more than a
 * request, so each world is built once and many URLs are run against it.
 */
export function worldPool(
  focus: Parameters<typeof worlds>[0],
  size: number,
  seed: number,
): World[] {
  return fc.sample(worlds(focus), { numRuns: size, seed });
}

const memo = new Map<string, DnrEmulator>();
export function emulatorFor(w: World): DnrEmulator {
  const key = JSON.stringify(w);
  let e = memo.get(key);
  if (e === undefined) {
    if (memo.size > 5000) memo.clear();
    memo.set(key, (e = new DnrEmulator(worldRules(w))));
  }
  return e;
}

/** One request: the URL as written, its type, and for a subresource the tab's page. */
export interface Case {
  raw: string;
  type: DnrResourceType;
  /** The tab's committed top-level document (subresources); -1 tab when absent. */
  top: string | null;
}

export const withoutFragment = (url: string): string => url.replace(/#.*$/s, '');

/** decide()'s outcome: where the request goes (`null`: it stays as it is). */
export function decidedTarget(
  w: World,
  url: string,
  type: DnrResourceType,
  top: string | null,
  tab = LOOP_TAB,
): string | null {
  const d = decision(w, url, type, top, tab);
  return d.action === 'upgrade' ? withoutFragment(d.url) : null;
}

export function decision(
  w: World,
  url: string,
  type: DnrResourceType,
  top: string | null,
  tab = LOOP_TAB,
): Decision {
  const navigation = type === 'main_frame';
  return decide({
    url,
    kind: navigation ? 'navigation' : 'subresource',
    tab: {
      tabId: navigation || top !== null ? tab : -1,
      topUrl: navigation ? url : (top ?? undefined),
    },
    state: decisionState(w),
  });
}

/**
 * The rules' outcome in the emulator: the redirect's target, the handoff page's decision when
 * the rules send the page there (it asks decide(), then loads what it says), else null.
 */
export function enforcedTarget(
  w: World,
  raw: string,
  type: DnrResourceType,
  top: string | null,
  tab = LOOP_TAB,
): string | null {
  const navigation = type === 'main_frame';
  const tabId = navigation || top !== null ? tab : -1;
  const out = emulatorFor(w).match({
    url: raw,
    type,
    tabId,
    initiator: navigation || top === null ? undefined : new URL(top).origin,
    frames: navigation || top === null ? [] : [{ url: top, type: 'main_frame' }],
  });
  let to = out.redirectUrl;
  // Chromium matches a redirected request again (trailing dots come off, then a rule upgrades).
  for (let hop = 0; to !== null && to.startsWith('http:') && hop < 4; hop++) {
    const next = emulatorFor(w).match({
      url: to,
      type,
      tabId,
      frames: navigation || top === null ? [] : [{ url: top, type: 'main_frame' }],
    });
    if (next.redirectUrl === null) break;
    to = next.redirectUrl;
  }
  if (to === null) return null;
  if (to.startsWith(`${HANDOFF_URL}?`)) {
    const page = decideHandoff(handoffAddress(to), {
      decide: (url) =>
        decide({ url, kind: 'navigation', tab: { tabId, topUrl: url }, state: decisionState(w) }),
    });
    return page.ok && page.target.startsWith('https:') ? withoutFragment(page.target) : null;
  }
  return withoutFragment(to);
}

/** The rule that wins for the request itself (null: none). */
export function enforcedRule(
  w: World,
  raw: string,
  type: DnrResourceType,
  top: string | null,
  tab = LOOP_TAB,
): DnrRule | null {
  const navigation = type === 'main_frame';
  return emulatorFor(w).match({
    url: raw,
    type,
    tabId: navigation || top !== null ? tab : -1,
    frames: navigation || top === null ? [] : [{ url: top, type: 'main_frame' }],
  }).rule;
}
