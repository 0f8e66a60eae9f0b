/**
 * The "settings" layer (Chromium): the global switch, the site lists, user rules and
 * HTTPS-first as dynamic rules, recompiled when the settings change (the writer writes only
 * what differs).
 */
import type { ProtectionSnapshot } from '../decision/snapshot.js';
import { type Ruleset } from '@httpsify/engine';
import { ALL_RESOURCE_TYPES, compileDnr, type DnrResourceType } from '@httpsify/engine/dnr';
import { type HandoffScope, handoffScopeRules, rulesetsScope } from './handoff-rules.js';
import {
  GLOBAL_OFF_PRIORITY,
  HANDOFF_FORMS_PRIORITY,
  HTTPS_FIRST_EXEMPT_PRIORITY,
  HTTPS_FIRST_PRIORITY,
  OWN_REQUESTS_PRIORITY,
  PROTECTION_PRIORITY,
  SITE_DISABLED_PRIORITY,
  USER_RULE_PRIORITY_OFFSET,
} from './layout.js';
import { parseSitePattern } from '../site-rules/site-pattern.js';
import { localNameConditions, localNameRegexes } from './local-name-rules.js';
import type { LayerFallback, RuleWriter } from './rule-writer.js';
import { siteEntryConditions } from './site-conditions.js';
import { type DnrUsage, type RuleBody, usageOf } from './rules.js';

export interface UiRuleInputs {
  globalEnabled: boolean;
  disabledSites: readonly string[];
  httpAllowedSites: readonly string[];
  /** Hosts opened over HTTP "once" this session. */
  httpOnceHosts: readonly string[];
  userRulesets: readonly Ruleset[];
  /** HTTPS-first on and not suspended by a captive portal. */
  httpsFirst: boolean;
  /** The extension's id: its own requests (initiator `chrome-extension://<id>`) go out as sent. */
  extensionId?: string;
  /**
   * The handoff page: main frames of user rulesets DNR does not carry (all of them, or those the
   * compiler leaves partly out) go there, above every other rule but the user's own switches,
   * so that a page loads as decide() says even when the user's rules are not rules here.
   */
  handoffPage?: string;
  /** False: the user's rulesets are not compiled at all (they do not fit), only handed off. */
  compileUserRules?: boolean;
  /** False: not even their page loads go to the handoff page; their hosts are only upgraded. */
  handOffPages?: boolean;
}

const SUBRESOURCE_TYPES = ALL_RESOURCE_TYPES.filter((t) => t !== 'main_frame');

/** HTTPS-first's exemption regexes (Chromium must accept each: test/ui-chromium-https-first). */
export const HTTPS_FIRST_EXEMPT_REGEXES = localNameRegexes();

export function uiDnrRules(inputs: UiRuleInputs): {
  rules: RuleBody[];
  omitted: number;
  /** The user rulesets whose page loads go to the handoff page (not, or not wholly, compiled). */
  handedOff: string[];
} {
  const planned: RuleBody[] = [];
  const all = [...ALL_RESOURCE_TYPES];
  if (!inputs.globalEnabled) {
    planned.push({
      priority: GLOBAL_OFF_PRIORITY,
      action: { type: 'allow' },
      condition: { urlFilter: '|http://', resourceTypes: all },
    });
    return { rules: planned, omitted: 0, handedOff: [] };
  }
  if (inputs.extensionId !== undefined)
    planned.push({
      priority: OWN_REQUESTS_PRIORITY,
      action: { type: 'allow' },
      condition: {
        urlFilter: '|http://',
        initiatorDomains: [inputs.extensionId],
        resourceTypes: ['xmlhttprequest'],
      },
    });
  // A site switched off is about the tab's page (decide() step 3): its main frame allows the
  // whole frame tree. Not sub_frame: a frame of that site inside another page is judged by the
  // page, as decide() judges it.
  for (const condition of siteEntryConditions(inputs.disabledSites, 'any'))
    planned.push({
      priority: SITE_DISABLED_PRIORITY,
      action: { type: 'allowAllRequests' },
      condition: { ...condition, resourceTypes: ['main_frame'] },
    });
  // A known HTTPS host's subresources are not upgraded on a port its own entry ("off" or
  // "rulesets only") names (decide() step 13); entries for every port keep the host out of the
  // known hosts' rules already. Same priority as those rules: `allow` wins the tie.
  const portEntries = [...inputs.disabledSites, ...inputs.httpAllowedSites].filter(
    (e) => parseSitePattern(e)?.port != null,
  );
  for (const condition of siteEntryConditions(portEntries, 'http'))
    planned.push({
      priority: PROTECTION_PRIORITY,
      action: { type: 'allow' },
      condition: { ...condition, resourceTypes: SUBRESOURCE_TYPES },
    });
  let omitted = 0;
  let handedOff: Ruleset[];
  if (inputs.userRulesets.length > 0 && inputs.compileUserRules !== false) {
    const compiled = compileDnr([...inputs.userRulesets], { isActive: () => true });
    omitted = compiled.report.omissions.length;
    const partial = new Set(compiled.report.omissions.map((o) => o.ruleset));
    handedOff = inputs.userRulesets.filter((rs) => partial.has(rs.name));
    for (const r of compiled.rules) {
      const { id: _id, ...rest } = r;
      planned.push({ ...rest, priority: r.priority + USER_RULE_PRIORITY_OFFSET });
    }
  } else handedOff = [...inputs.userRulesets];
  if (inputs.handoffPage !== undefined && handedOff.length > 0) {
    const scope = rulesetsScope(handedOff);
    // Their page loads to the page that asks decide(); none when even that does not fit
    // (`handOffPages` false: one regex per wildcard target), and then the upgrade below takes
    // their page loads too.
    const pages = inputs.handOffPages !== false;
    if (pages)
      planned.push(...handoffScopeRules(scope, inputs.handoffPage, HANDOFF_FORMS_PRIORITY));
    planned.push(...hostsUpgrade(scope, pages ? SUBRESOURCE_TYPES : ALL_RESOURCE_TYPES));
  }
  if (inputs.httpsFirst) {
    planned.push({
      priority: HTTPS_FIRST_PRIORITY,
      action: { type: 'upgradeScheme' },
      condition: { urlFilter: '|http://', resourceTypes: ['main_frame'] },
    });
    for (const condition of localNameConditions())
      planned.push({ priority: HTTPS_FIRST_EXEMPT_PRIORITY, action: { type: 'allow' }, condition });
    // "Rulesets only" is about the site's own host: the known-hosts rules leave it out, and
    // other hosts its pages load from keep their own state (an HTTP page's known HTTPS CDN is
    // still upgraded: that is the protection browsers do not give).
    // http-once is per host, any port: the host is an entry without a port.
    for (const condition of siteEntryConditions(
      [...inputs.httpAllowedSites, ...inputs.httpOnceHosts],
      'http',
    ))
      planned.push({
        priority: HTTPS_FIRST_EXEMPT_PRIORITY,
        action: { type: 'allow' },
        condition: { ...condition, resourceTypes: ['main_frame'] },
      });
  }
  return { rules: planned, omitted, handedOff: handedOff.map((rs) => rs.name) };
}

/**
 * A scheme upgrade of the hosts of user rulesets DNR does not carry, below any of their rules
 * that did compile: never laxer than decide(), at worst stricter (their exclusions and host
 * changes are not spelled here). No regex: the domains (subdomains too) in one rule, each
 * wildcard target as a URL filter (`www.shop.*` -> `|http://www.shop.*^`, which admits more
 * hosts than the target: stricter again).
 */
function hostsUpgrade(scope: HandoffScope, resourceTypes: readonly DnrResourceType[]): RuleBody[] {
  const rule = (condition: RuleBody['condition']): RuleBody => ({
    priority: USER_RULE_PRIORITY_OFFSET,
    action: { type: 'upgradeScheme' },
    condition: { ...condition, resourceTypes: [...resourceTypes] },
  });
  return [
    ...(scope.domains.length > 0
      ? [rule({ urlFilter: '|http://', requestDomains: scope.domains })]
      : []),
    ...scope.patterns.map((p) => rule({ urlFilter: `|http://${p}^` })),
  ];
}

/**
 * The "tabOnce" layer (session rules, the only ones that take `tabIds`): "open over HTTP" chosen
 * for one tab, as decide() steps 7 and 13 read it. Its main frames stay on HTTP beside HTTPS-first
 * (its exemption's priority, below every ruleset), and its subresources are left out of the
 * known hosts' upgrade (their priority; `allow` wins the tie), in that tab alone.
 */
export function tabOnceRules(pairs: readonly [number, string][], httpsFirst: boolean): RuleBody[] {
  if (!httpsFirst) return [];
  return [...pairs]
    .sort(([a, x], [b, y]) => a - b || (x < y ? -1 : x > y ? 1 : 0))
    .flatMap(([tabId, host]) =>
      siteEntryConditions([host], 'http').flatMap((condition): RuleBody[] => [
        {
          priority: HTTPS_FIRST_EXEMPT_PRIORITY,
          action: { type: 'allow' },
          condition: { ...condition, tabIds: [tabId], resourceTypes: ['main_frame'] },
        },
        {
          priority: PROTECTION_PRIORITY,
          action: { type: 'allow' },
          condition: { ...condition, tabIds: [tabId], resourceTypes: SUBRESOURCE_TYPES },
        },
      ]),
    );
}

/**
 * Declares the settings layer from the decision's state of now (decision/snapshot.ts). When it
 * does not fit beside the library and channels, the user's own rules go first, then the site
 * entries: the switches and the mode must still hold as decide() says, and a missing `allow`
 * leaves the browser stricter than decide(), never laxer (rule-writer.ts keeps no rule the
 * settings no longer ask for). The error says what was left out.
 */
export async function syncSettingsRules(
  writer: RuleWriter,
  snap: ProtectionSnapshot,
  extensionId: string,
  handoffPage?: string,
): Promise<void> {
  const user = snap.dnr.activeUserRulesets;
  const compile = (sites: boolean, compileUserRules = true, handOffPages = true) =>
    uiDnrRules({
      globalEnabled: snap.globalEnabled,
      disabledSites: sites ? [...snap.dnr.disabledSites] : [],
      httpAllowedSites: sites ? [...snap.dnr.httpAllowedSites] : [],
      // Kept in every set: a few hosts, each a click this session; without them the fallback
      // page's "open over HTTP" would lead back to itself.
      httpOnceHosts: [...snap.httpOnce],
      userRulesets: [...user],
      httpsFirst: snap.httpsFirst,
      extensionId,
      handoffPage,
      compileUserRules,
      handOffPages,
    });
  const tabs = [...snap.httpOnceInTabs].flatMap(([tabId, hosts]) =>
    [...hosts].map((h): [number, string] => [tabId, h]),
  );
  const full = compile(true);
  const fallbacks: LayerFallback[] = [];
  if (user.length > 0)
    fallbacks.push({ rules: compile(true, false).rules, without: USER_RULES_LEFT_OUT });
  fallbacks.push({ rules: compile(false, false).rules, without: SITES_LEFT_OUT });
  // The smallest: within the reserve whatever the user's rulesets are (no regex of theirs).
  if (user.length > 0)
    fallbacks.push({ rules: compile(false, false, false).rules, without: PAGES_LEFT_OUT });
  const partial =
    full.handedOff.length === 0
      ? null
      : `part of ${full.handedOff.length} of the user's own rulesets, which DNR cannot express (their page loads go to the rulesets)`;
  try {
    await writer.setLayer('settings', full.rules, fallbacks, partial);
  } finally {
    // Whatever became of the layer above, a tab's "open over HTTP" ends when decide() says so.
    await writer.setLayer('tabOnce', tabOnceRules(tabs, snap.globalEnabled && snap.httpsFirst));
  }
}

/**
 * The room the settings layer holds in reserve (rule-writer.ts): its smallest set — the switches,
 * the mode and its local-name exemptions — plus a few groups of hosts opened over HTTP and of
 * the user's rulesets' page loads. The other layers plan around it, so turning the global switch
 * or the mode back on always fits.
 */
export function settingsReserve(): DnrUsage {
  const smallest = usageOf(
    uiDnrRules({
      globalEnabled: true,
      disabledSites: [],
      httpAllowedSites: [],
      httpOnceHosts: [],
      userRulesets: [],
      httpsFirst: true,
      extensionId: 'reserve',
    }).rules,
  );
  return {
    rules: smallest.rules + RESERVE_HEADROOM,
    regexRules: smallest.regexRules + RESERVE_HEADROOM,
    unsafeRules: smallest.unsafeRules + RESERVE_HEADROOM,
  };
}

/** Rules beyond the smallest set: host groups (one per label count) and handoff rules. */
const RESERVE_HEADROOM = 16;

/** How a settings layer written without the user's rules is named in its error (and the UI). */
export const USER_RULES_LEFT_OUT = "the user's own rules (their page loads go to the rulesets)";
/** …and one without the handoff of the user's page loads either (their hosts upgraded alone). */
export const PAGES_LEFT_OUT =
  "the sites' entries and the user's own rules (their hosts are upgraded, not rewritten as they say)";
/** …and one written without the sites' entries (or the user's rules). */
export const SITES_LEFT_OUT =
  "the sites' entries (but this session's \"open over HTTP\") and the user's own rules";
