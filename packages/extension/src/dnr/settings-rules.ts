/**
 * The "settings" layer (Chromium): the global switch, the site lists, user rules and
 * HTTPS-first as dynamic rules, recompiled when the settings change (the writer writes only
 * what differs).
 */
import type { ProtectionSnapshot } from '../decision/snapshot.js';
import { type Ruleset } from '@httpsify/engine';
import { ALL_RESOURCE_TYPES, compileDnr } from '@httpsify/engine/dnr';
import {
  GLOBAL_OFF_PRIORITY,
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
import type { RuleBody } from './rules.js';

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
}

const SUBRESOURCE_TYPES = ALL_RESOURCE_TYPES.filter((t) => t !== 'main_frame');

/** HTTPS-first's exemption regexes (Chromium must accept each: test/ui-chromium-https-first). */
export const HTTPS_FIRST_EXEMPT_REGEXES = localNameRegexes();

export function uiDnrRules(inputs: UiRuleInputs): { rules: RuleBody[]; omitted: number } {
  const planned: RuleBody[] = [];
  const all = [...ALL_RESOURCE_TYPES];
  if (!inputs.globalEnabled) {
    planned.push({
      priority: GLOBAL_OFF_PRIORITY,
      action: { type: 'allow' },
      condition: { urlFilter: '|http://', resourceTypes: all },
    });
    return { rules: planned, omitted: 0 };
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
  if (inputs.userRulesets.length > 0) {
    const compiled = compileDnr([...inputs.userRulesets], { isActive: () => true });
    omitted = compiled.report.omissions.length;
    for (const r of compiled.rules) {
      const { id: _id, ...rest } = r;
      planned.push({ ...rest, priority: r.priority + USER_RULE_PRIORITY_OFFSET });
    }
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
  return { rules: planned, omitted };
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
): Promise<void> {
  const compile = (userRulesets: readonly Ruleset[], sites: boolean) =>
    uiDnrRules({
      globalEnabled: snap.globalEnabled,
      disabledSites: sites ? [...snap.dnr.disabledSites] : [],
      httpAllowedSites: sites ? [...snap.dnr.httpAllowedSites] : [],
      // Kept in every set: a few hosts, each a click this session; without them the fallback
      // page's "open over HTTP" would lead back to itself.
      httpOnceHosts: [...snap.httpOnce],
      userRulesets: [...userRulesets],
      httpsFirst: snap.httpsFirst,
      extensionId,
    }).rules;
  const tabs = [...snap.httpOnceInTabs].flatMap(([tabId, hosts]) =>
    [...hosts].map((h): [number, string] => [tabId, h]),
  );
  const user = snap.dnr.activeUserRulesets;
  const fallbacks: LayerFallback[] = [];
  if (user.length > 0) fallbacks.push({ rules: compile([], true), without: USER_RULES_LEFT_OUT });
  fallbacks.push({ rules: compile([], false), without: SITES_LEFT_OUT });
  try {
    await writer.setLayer('settings', compile(user, true), fallbacks);
  } finally {
    // Whatever became of the layer above, a tab's "open over HTTP" ends when decide() says so.
    await writer.setLayer('tabOnce', tabOnceRules(tabs, snap.globalEnabled && snap.httpsFirst));
  }
}

/** How a settings layer written without the user's rules is named in its error (and the UI). */
export const USER_RULES_LEFT_OUT = "the user's own rules";
/** …and one written without the sites' entries (or the user's rules). */
export const SITES_LEFT_OUT =
  "the sites' entries (but this session's \"open over HTTP\") and the user's own rules";
