/**
 * Routes the pages' settings requests (ui-protocol.ts) to the module that answers each: the
 * ruleset lists, page status and popup, settings files and user rules, channels, site lists and
 * switches. Whoever sent it was checked before (ui-senders.ts); a new request kind goes here.
 */
import type {
  AboutInfo,
  PopupState,
  RuleLimit,
  RulesetRow,
  UiRequest,
} from '../protocol/ui-protocol.js';
import {
  addChannel,
  channelRows,
  checkChannel,
  type ChannelRequestContext,
  previewChannel,
  removeChannel,
} from './channel-requests.js';
import type { LayeredRewriter } from '../rewriter/layered-rewriter.js';
import {
  rulesetDetails,
  rulesetHosts,
  rulesetIndex,
  rulesetRow,
} from '../rewriter/ruleset-catalog.js';
import type { Settings } from '../settings/schema.js';
import {
  applyImport,
  exportSettings,
  importUserRules,
  previewImport,
  saveUserRule,
} from './settings-requests.js';
import { addSite, removeSite, siteOf } from '../site-rules/site-pattern.js';

/** What the router reaches (the settings core implements it). */
export interface SettingsRequestTarget extends ChannelRequestContext {
  readonly rewriter: LayeredRewriter;
  popupState(tabId: number, tabUrl: string | undefined): PopupState;
  retryPage(tabId: number, tabUrl: string | undefined): Promise<{ ok: boolean; url?: string }>;
  openOverHttp(tabId: number, url: string): Promise<{ ok: boolean }>;
  about(): AboutInfo;
  ruleLimits(): RuleLimit[];
  /** "Open over HTTP this time" for the host (the fallback page's button, ticket checked). */
  allowHttpOnce(host: string): Promise<void>;
  allowHttpOnceInTab(tabId: number, host: string): Promise<void>;
  clearRepairs(): Promise<Settings>;
}

/** `tabAddress`: the tab's address, from the browser when it says, else what the background saw. */
export async function routeSettingsRequest(
  t: SettingsRequestTarget,
  req: UiRequest,
  tabAddress: (tabId: number) => Promise<string | undefined>,
): Promise<unknown> {
  switch (req.type) {
    case 'settings':
      return t.settings;
    case 'popup':
      return t.popupState(req.tabId, await tabAddress(req.tabId));
    case 'pageRetry':
      return t.retryPage(req.tabId, await tabAddress(req.tabId));
    case 'openOverHttp': {
      // Only the tab's own page, at its http:// address: nothing else can be sent this way.
      const current = await tabAddress(req.tabId);
      const asked = siteOf(String(req.url));
      if (
        current === undefined ||
        asked === null ||
        siteOf(current)?.hostWithPort !== asked.hostWithPort ||
        !String(req.url).startsWith('http:')
      )
        return { error: 'not-this-page' };
      return t.openOverHttp(req.tabId, String(req.url));
    }
    case 'about':
      return t.about();
    case 'ruleLimits':
      return t.ruleLimits();
    case 'rulesetDetails':
      return (
        rulesetDetails(t.rewriter, String(req.name)) ?? { error: `no ruleset named ${req.name}` }
      );
    case 'setFlag':
      return t.update(() => ({ [req.flag]: req.value === true }));
    case 'setRuleset': {
      if (rulesetRow(t.rewriter, req.name) === null)
        return { error: `no ruleset named ${req.name}` };
      return t.update((s) => {
        const overrides = { ...s.rulesetOverrides };
        const row = rulesetRow(t.rewriter, req.name) as RulesetRow;
        // Only differences from the default are stored.
        if (req.active === null || req.active === row.defaultActive) delete overrides[req.name];
        else overrides[req.name] = req.active;
        return { rulesetOverrides: overrides };
      });
    }
    case 'resetRulesets':
      return t.update((s) => {
        if (req.names === undefined) return { rulesetOverrides: {} };
        const overrides = { ...s.rulesetOverrides };
        for (const n of req.names) delete overrides[n];
        return { rulesetOverrides: overrides };
      });
    case 'rulesetIndex':
      return rulesetIndex(t.rewriter);
    case 'rulesetHosts':
      return rulesetHosts(t.rewriter);
    case 'rulesetsForHost':
      return t.rewriter.rulesetNamesForHost(req.host.trim().toLowerCase());
    case 'siteAdd': {
      if (addSite([], req.entry) === null) return { error: 'invalid-site' };
      return t.update((s) => ({ [req.list]: addSite(s[req.list], req.entry) as string[] }));
    }
    case 'siteRemove':
      return t.update((s) => ({ [req.list]: removeSite(s[req.list], req.entry) }));
    case 'portalSignIn': {
      const probe = t.settings.portalProbeUrl;
      const host = siteOf(probe)?.host;
      if (host === undefined || !probe.startsWith('http:')) return { error: 'no-probe' };
      // Only the probe's host, which serves nothing but its known answer.
      await t.allowHttpOnce(host);
      return { ok: true, url: probe };
    }
    case 'httpOnce': {
      const site = siteOf(req.url);
      if (site === null) return { error: 'invalid-url' };
      if (req.tabId === undefined) await t.allowHttpOnce(site.host);
      else if (Number.isInteger(req.tabId) && req.tabId >= 0)
        await t.allowHttpOnceInTab(req.tabId, site.host);
      else return { error: 'invalid-tab' };
      return { ok: true };
    }
    case 'userRuleSave':
      return saveUserRule(t, req.xml, req.replacing);
    case 'userRuleRemove':
      return t.update((s) => {
        const overrides = { ...s.rulesetOverrides };
        delete overrides[req.name];
        return {
          userRules: s.userRules.filter((r) => r.name !== req.name),
          rulesetOverrides: overrides,
        };
      });
    case 'userRulesImport':
      return importUserRules(t, req.xml);
    case 'exportSettings':
      return exportSettings(t);
    case 'importPreview':
      return previewImport(t, req.text);
    case 'importApply':
      return applyImport(t, req.text, req.confirmedChannels, req.confirmedUserRules);
    case 'resetStats':
      return t.update(() => ({ stats: { upgrades: 0, fallbacks: 0, httpHosts: [] } }));
    case 'channelStatus':
      return channelRows(t);
    case 'channelPreview':
      return previewChannel(t, String(req.json));
    case 'channelAdd':
      return addChannel(t, req.json);
    case 'channelRemove':
      return removeChannel(t, req.name);
    case 'channelCheck':
      return checkChannel(t, req.name);
    case 'clearRepairs':
      return t.clearRepairs();
    default:
      return { error: `unknown request ${(req as { type?: unknown }).type}` };
  }
}
