/**
 * Where every declarativeNetRequest rule of the Chromium build sits: its priority (DNR fires
 * the highest one that matches) and the layer and id range it is written in (the rule writer,
 * rule-writer.ts, is the only module that writes them). One table, so a new kind of rule is
 * placed against all the others; the order is tested in test/dnr-layout.test.ts.
 *
 * Priorities, highest first:
 *   OPEN_OVER_HTTP        3,000,000  one address back to http:// in one tab, once, after the user
 *                                    asked for HTTP past the browser's own upgrade (session ids
 *                                    3,000,000-3,000,999, written by status/open-over-http.ts)
 *   GLOBAL_OFF            2,000,000  the global switch is off: nothing of ours fires
 *   OWN_REQUESTS          1,900,000  the extension's own fetches (probes) go out as sent
 *   SITE_DISABLED         1,500,000  "disable on this site" (allowAllRequests on the frame tree)
 *   LOOP_ALLOW            1,000,000  one URL in one tab after a redirect loop (session)
 *   HANDOFF_ONCE          500,001    the handoff page lets one URL through in one tab (session)
 *   HANDOFF_FORMS         500,000    main frames with credentials or a trailing-dot host go to the page
 *   user rules            100,000 + their compiled priority
 *   channels              12,000 .. 100,000, one band of CHANNEL_PRIORITY_STEP per channel; the
 *                         imported ruleset library takes the band after the last channel
 *   HANDOFF               11,000     main frames whose rulesets DNR cannot express go to the page
 *   compiled rulesets     1 .. MAX_COMPILED_PRIORITY (~10,500): static defaults, overrides
 *   HTTPS_FIRST_EXEMPT    3          local names and addresses HTTPS-first leaves alone
 *   PROTECTION            2          default upgrading of hosts no ruleset handles (see below)
 *   HTTPS_FIRST           1          HTTPS-first: every other top-level http:// page
 *
 * Id ranges: LAYERS below (dynamic: overrides, channels, settings, handoff; session: loop
 * allows, handoff once, "open over HTTP" for one tab, the known hosts' upgrades), numbered by the
 * rule writer alone.
 */
import { MAX_COMPILED_PRIORITY } from '@httpsify/engine/dnr';

export { MAX_COMPILED_PRIORITY };

export const GLOBAL_OFF_PRIORITY = 2_000_000;
/**
 * The worker's own requests (the fallback's `HEAD http://host/`, the captive-portal check) are
 * never rewritten: a ruleset's redirect of the probe reads as "the site answers over HTTP".
 */
export const OWN_REQUESTS_PRIORITY = 1_900_000;
export const SITE_DISABLED_PRIORITY = 1_500_000;
/** Above every compiled rule: a loop verdict's URL loads over HTTP in its tab (loop-rules.ts). */
export const LOOP_ALLOW_PRIORITY = 1_000_000;
/** User rules outrank every default ruleset (the offset keeps their internal order). */
export const USER_RULE_PRIORITY_OFFSET = 100_000;
/**
 * Channel rules are tried before the defaults and after user rules: the channel at settings
 * position i is shifted by BASE + (MAX - 1 - i) * STEP, each step wider than a compiled ruleset
 * set's priorities, so the last possible channel still ends below USER_RULE_PRIORITY_OFFSET.
 */
export const CHANNEL_PRIORITY_BASE = 12_000;
export const CHANNEL_PRIORITY_STEP = 11_000;
export const MAX_DNR_CHANNELS = 8;
/**
 * Main frames of hosts whose rulesets did not compile completely go to the handoff page, above
 * every compiled default or override rule for them (the engine decides those exactly) and below
 * channels and user rules, which DNR applies as they are.
 */
export const HANDOFF_PRIORITY = 11_000;
/**
 * Main frames with credentials or a trailing-dot host go to the handoff page above user rules and
 * channels too: a compiled rule never rewrites them as the reference does (a regex substitution
 * drops the credentials, and a set with a regex redirect holds an `allow` for every URL with
 * credentials, which would open them over HTTP even where a ruleset upgrades them).
 */
export const HANDOFF_FORMS_PRIORITY = 500_000;
/**
 * The page's "load the original URL once": above both handoffs. The page's decision already
 * weighed user rules and channels.
 */
export const HANDOFF_ONCE_PRIORITY = HANDOFF_FORMS_PRIORITY + 1;
/** HTTPS-first's exemptions, just above its own upgrade. */
export const HTTPS_FIRST_EXEMPT_PRIORITY = 3;
/**
 * Default protection's upgrades of subresources of hosts known to serve HTTPS
 * (protection/protection-dnr.ts): below every ruleset, exclusion, site setting and the
 * local-address exemptions, so rulesets apply first; above HTTPS-first's main-frame upgrade.
 */
export const PROTECTION_PRIORITY = 2;
/** HTTPS-first upgrades whatever no ruleset handles: the lowest priority. */
export const HTTPS_FIRST_PRIORITY = 1;

/**
 * The layers of rules and the id range each is written in, [base, limit). Only the rule writer
 * (rule-writer.ts) numbers rules: a layer declares its rules, the writer gives the i-th one
 * `base + i`. Rules outside every range are stale (an older version's) and are removed.
 */
export const LAYERS = {
  overrides: { store: 'dynamic', base: 1, limit: 2_000_000 },
  channels: { store: 'dynamic', base: 2_000_000, limit: 5_000_000 },
  settings: { store: 'dynamic', base: 5_000_000, limit: 6_000_000 },
  handoff: { store: 'dynamic', base: 6_000_000, limit: 6_500_000 },
  loops: { store: 'session', base: 1, limit: 1_000_000 },
  handoffOnce: { store: 'session', base: 1_000_000, limit: 2_000_000 },
  tabOnce: { store: 'session', base: 2_000_000, limit: 2_100_000 },
  // Session, though it outlives the worker's restarts: the known hosts change as the user browses,
  // and Chromium indexes the whole dynamic store again at each update (a second and more with
  // the 2018 library, every extension call waiting), the session store alone in milliseconds.
  // The start writes them again after a browser restart.
  protection: { store: 'session', base: 4_000_000, limit: 4_500_000 },
} as const satisfies Record<string, { store: RuleStore; base: number; limit: number }>;

export type LayerName = keyof typeof LAYERS;
export type RuleStore = 'dynamic' | 'session';
export const LAYER_NAMES = Object.keys(LAYERS) as LayerName[];

/**
 * Session ids of the "open over HTTP past the browser" redirects, written by
 * status/open-over-http.ts itself (they must land before the tab navigates): the writer leaves
 * them alone, never as stale (session rules do not outlive an update).
 */
export const OPEN_OVER_HTTP_IDS = { base: 3_000_000, limit: 3_001_000 } as const;

/** The layer whose range holds `id` in `store`, or null (a stale rule). */
export function layerOf(store: RuleStore, id: number): LayerName | null {
  for (const name of LAYER_NAMES) {
    const l = LAYERS[name];
    if (l.store === store && id >= l.base && id < l.limit) return name;
  }
  return null;
}

/** Bases kept by name for the planners and tests that place rules relative to them. */
export const CHANNEL_RULE_ID_BASE = LAYERS.channels.base;
export const UI_RULE_ID_BASE = LAYERS.settings.base;
export const OVERRIDE_RULE_ID_LIMIT = LAYERS.overrides.limit;
