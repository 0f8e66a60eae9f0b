/**
 * The "settings" layer (Chromium): the global switch, the site lists, user rules and
 * HTTPS-first as dynamic rules, recompiled when the settings change (the writer writes only
 * what differs).
 */
import { type Ruleset } from '@httpsify/engine';
import { ALL_RESOURCE_TYPES, compileDnr } from '@httpsify/engine/dnr';
import { parseSitePattern } from '../site-rules/site-pattern.js';
import {
  GLOBAL_OFF_PRIORITY,
  HTTPS_FIRST_EXEMPT_PRIORITY,
  HTTPS_FIRST_PRIORITY,
  OWN_REQUESTS_PRIORITY,
  SITE_DISABLED_PRIORITY,
  USER_RULE_PRIORITY_OFFSET,
} from './layout.js';
import type { RuleWriter } from './rule-writer.js';
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

/** A urlFilter for one site entry (both schemes, the entry's port or any port). */
export function siteUrlFilter(entry: string): { urlFilter: string; requestDomains?: string[] } | null {
  const p = parseSitePattern(entry);
  if (p === null) return null;
  const port = p.port === null ? '^' : `:${p.port}^`;
  if (p.wildcard) return { urlFilter: `|http*://*.${p.host}${port}`, requestDomains: [p.host] };
  return { urlFilter: `|http*://${p.host}${port}` };
}

/**
 * Private, loopback and link-local addresses, IPv6 literals of those kinds and single-label
 * names. One pattern each: Chromium refuses a regex that compiles to more than 2 KB, and a
 * combined one does.
 */
const PORT_END = '(:[0-9]+)?(/|$)';
export const HTTPS_FIRST_EXEMPT_REGEXES = [
  `^http://[^./:\\[]+${PORT_END}`,
  `^http://(0|10|127)\\.[0-9]+\\.[0-9]+\\.[0-9]+${PORT_END}`,
  `^http://100\\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\\.[0-9]+\\.[0-9]+${PORT_END}`,
  `^http://169\\.254\\.[0-9]+\\.[0-9]+${PORT_END}`,
  `^http://172\\.(1[6-9]|2[0-9]|3[01])\\.[0-9]+\\.[0-9]+${PORT_END}`,
  `^http://192\\.168\\.[0-9]+\\.[0-9]+${PORT_END}`,
  `^http://\\[::1?\\]`,
  // IPv4-mapped local addresses, as the URL parser writes them (::ffff:c0a8:1 for 192.168.0.1):
  // 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.168/16.
  `^http://\\[::ffff:([0-9a-f]{1,2}|a[0-9a-f]{2}|64[4-7][0-9a-f]|7f[0-9a-f]{2}|a9fe|ac1[0-9a-f]|c0a8):[0-9a-f]{1,4}\\]`,
  `^http://\\[(f[cd]|fe[89ab])[0-9a-f]*:[^\\]]*\\]`,
];

/** Names that only exist locally (subdomains included, as requestDomains matches them). */
export const HTTPS_FIRST_EXEMPT_DOMAINS = ['localhost', 'onion', 'local', 'internal', 'home.arpa'];

export function uiDnrRules(inputs: UiRuleInputs): { rules: RuleBody[]; omitted: number } {
  const planned: RuleBody[] = [];
  const all = [...ALL_RESOURCE_TYPES];
  if (!inputs.globalEnabled) {
    planned.push({ priority: GLOBAL_OFF_PRIORITY, action: { type: 'allow' }, condition: { urlFilter: '|http://', resourceTypes: all } });
    return { rules: planned, omitted: 0 };
  }
  if (inputs.extensionId !== undefined)
    planned.push({
      priority: OWN_REQUESTS_PRIORITY,
      action: { type: 'allow' },
      condition: { urlFilter: '|http://', initiatorDomains: [inputs.extensionId], resourceTypes: ['xmlhttprequest'] },
    });
  for (const entry of inputs.disabledSites) {
    const filter = siteUrlFilter(entry);
    if (filter === null) continue;
    planned.push({
      priority: SITE_DISABLED_PRIORITY,
      action: { type: 'allowAllRequests' },
      condition: { ...filter, resourceTypes: ['main_frame', 'sub_frame'] },
    });
  }
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
    planned.push({ priority: HTTPS_FIRST_PRIORITY, action: { type: 'upgradeScheme' }, condition: { urlFilter: '|http://', resourceTypes: ['main_frame'] } });
    for (const regexFilter of HTTPS_FIRST_EXEMPT_REGEXES) {
      planned.push({ priority: HTTPS_FIRST_EXEMPT_PRIORITY, action: { type: 'allow' }, condition: { regexFilter, resourceTypes: ['main_frame'] } });
    }
    planned.push({
      priority: HTTPS_FIRST_EXEMPT_PRIORITY,
      action: { type: 'allow' },
      condition: { requestDomains: HTTPS_FIRST_EXEMPT_DOMAINS, resourceTypes: ['main_frame'] },
    });
    // "Rulesets only" is about the site's own host: the known-hosts rules leave it out, and
    // other hosts its pages load from keep their own state (an HTTP page's known HTTPS CDN is
    // still upgraded: that is the protection browsers do not give).
    for (const entry of [...inputs.httpAllowedSites, ...inputs.httpOnceHosts]) {
      const filter = siteUrlFilter(entry);
      if (filter !== null)
        planned.push({ priority: HTTPS_FIRST_EXEMPT_PRIORITY, action: { type: 'allow' }, condition: { ...filter, resourceTypes: ['main_frame'] } });
    }
  }
  return { rules: planned, omitted };
}

/** What the settings layer is built from (the settings controller; narrow, so tests build one). */
export interface SettingsRuleSources {
  settings: { globalEnabled: boolean; disabledSites: string[]; httpAllowedSites: string[]; httpsFirst: boolean };
  httpOnce: ReadonlySet<string>;
  userRulesets: readonly Ruleset[];
  userEngine: { isActive(id: number): boolean; rulesetIdsByName(name: string): number[] } | null;
}

/** Declares the settings layer from the controller's state of now. */
export function syncSettingsRules(writer: RuleWriter, c: SettingsRuleSources, extensionId: string): Promise<void> {
  const s = c.settings;
  const { rules } = uiDnrRules({
    globalEnabled: s.globalEnabled,
    disabledSites: s.disabledSites,
    httpAllowedSites: s.httpAllowedSites,
    httpOnceHosts: [...c.httpOnce],
    userRulesets: c.userRulesets.filter((r) => c.userEngine?.isActive(c.userEngine.rulesetIdsByName(r.name)[0] as number)),
    httpsFirst: s.httpsFirst,
    extensionId,
  });
  return writer.setLayer('settings', rules);
}
