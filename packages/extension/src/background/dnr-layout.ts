/**
 * Where every declarativeNetRequest rule of the Chromium build sits: its priority (DNR fires
 * the highest one that matches) and the id range it is written in (each writer replaces only
 * its own range). One table, so a new kind of rule is placed against all the others; the order
 * is tested in test/dnr-layout.test.ts.
 *
 * Priorities, highest first:
 *   GLOBAL_OFF            2,000,000  the global switch is off: nothing of ours fires
 *   OWN_REQUESTS          1,900,000  the extension's own fetches (probes) go out as sent
 *   SITE_DISABLED         1,500,000  "disable on this site" (allowAllRequests on the frame tree)
 *   LOOP_ALLOW            1,000,000  a host given up on after a redirect loop (session)
 *   user rules            100,000 + their compiled priority
 *   channels              12,000 .. 100,000, one band of CHANNEL_PRIORITY_STEP per channel; the
 *                         imported ruleset library takes the band after the last channel
 *   HANDOFF_ONCE          11,001     the handoff page lets one URL through in one tab (session)
 *   HANDOFF               11,000     main frames whose rulesets DNR cannot express go to the page
 *   compiled rulesets     1 .. MAX_COMPILED_PRIORITY (~10,500): static defaults, overrides
 *   HTTPS_FIRST_EXEMPT    3          local names and addresses HTTPS-first leaves alone
 *   PROTECTION            2          default upgrading of hosts no ruleset handles (see below)
 *   HTTPS_FIRST           1          HTTPS-first: every other top-level http:// page
 *
 * Dynamic rule ids: ruleset overrides [1, 2M), channels [2M, 5M), settings [5M, 6M), handoff
 * [6M, 6.5M), protection [6.5M, 7M). Session rule ids: loop allows [1, 1M), handoff once [1M, 2M).
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
/** Above every compiled rule: a host given up on (redirect loop) is never upgraded again. */
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
/** The page's "load the original URL once": just above the handoff. */
export const HANDOFF_ONCE_PRIORITY = HANDOFF_PRIORITY + 1;
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

/** Dynamic rule id ranges, [base, limit). */
export const OVERRIDE_RULE_ID_BASE = 1;
export const CHANNEL_RULE_ID_BASE = 2_000_000;
export const UI_RULE_ID_BASE = 5_000_000;
export const HANDOFF_RULE_ID_BASE = 6_000_000;
export const PROTECTION_RULE_ID_BASE = 6_500_000;
export const DYNAMIC_ID_LIMIT = 7_000_000;

/** Session rule id ranges. */
export const LOOP_SESSION_ID_BASE = 1;
export const HANDOFF_SESSION_ID_BASE = 1_000_000;
export const SESSION_ID_LIMIT = 2_000_000;

export const inOverrideRange = (id: number): boolean => id >= OVERRIDE_RULE_ID_BASE && id < CHANNEL_RULE_ID_BASE;
export const inChannelRange = (id: number): boolean => id >= CHANNEL_RULE_ID_BASE && id < UI_RULE_ID_BASE;
export const inUiRange = (id: number): boolean => id >= UI_RULE_ID_BASE && id < HANDOFF_RULE_ID_BASE;
export const inHandoffRange = (id: number): boolean => id >= HANDOFF_RULE_ID_BASE && id < PROTECTION_RULE_ID_BASE;
export const inProtectionRange = (id: number): boolean => id >= PROTECTION_RULE_ID_BASE && id < DYNAMIC_ID_LIMIT;
export const inLoopSessionRange = (id: number): boolean => id >= LOOP_SESSION_ID_BASE && id < HANDOFF_SESSION_ID_BASE;
export const inHandoffSessionRange = (id: number): boolean => id >= HANDOFF_SESSION_ID_BASE && id < SESSION_ID_LIMIT;

/** The lowest free id of a range, given the ids in use. */
export function nextId(existing: readonly { id: number }[], base: number, inRange: (id: number) => boolean): number {
  return existing.filter((r) => inRange(r.id)).reduce((max, r) => Math.max(max, r.id + 1), base);
}
