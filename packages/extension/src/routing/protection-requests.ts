/**
 * The pages' requests that belong to the protection mode: per-site states, the HTTP allowlist
 * in Chrome's policy syntax, the known-hosts store, the re-check log and channels by URL. Everything a page sends is checked here before it touches settings.
 */
import type { Settings } from '../settings/schema.js';
import type { SettingsStore } from '../settings/store.js';
import {
  exportHttpAllowlistPolicy,
  parseHttpAllowlistPolicy,
} from '../site-rules/http-allowlist-policy.js';
import { addSite, removeSite } from '../site-rules/site-pattern.js';
import type { SettingsController } from './settings-controller.js';
import { addChannel } from './channel-requests.js';
import { fetchChannelDefinition } from '../protection/channel-url.js';
import {
  PROTECTION_REQUEST_TYPES,
  type ProtectionRequest,
  type SiteState,
} from '../protection/protection-protocol.js';
import type { ProtectionRuntime } from '../protection/protection-runtime.js';
import { parseRecheckState, RECHECK_STORAGE_KEY } from '../protection/recheck.js';

export interface ProtectionRequestContext {
  controller: SettingsController;
  protection: ProtectionRuntime;
  store: SettingsStore;
  storage: { get(keys: string): Promise<Record<string, unknown>> };
}

export function isProtectionRequest(request: { type: string }): request is ProtectionRequest {
  return (PROTECTION_REQUEST_TYPES as readonly string[]).includes(request.type);
}

/** The two lists a state maps to: "off" is disabledSites, "rulesets only" is httpAllowedSites. */
export function withSiteState(
  s: Pick<Settings, 'disabledSites' | 'httpAllowedSites'>,
  entry: string,
  state: SiteState,
): Pick<Settings, 'disabledSites' | 'httpAllowedSites'> | null {
  if (addSite([], entry) === null) return null;
  const disabledSites = removeSite(s.disabledSites, entry);
  const httpAllowedSites = removeSite(s.httpAllowedSites, entry);
  if (state === 'off')
    return { disabledSites: addSite(disabledSites, entry) as string[], httpAllowedSites };
  if (state === 'rulesets')
    return { disabledSites, httpAllowedSites: addSite(httpAllowedSites, entry) as string[] };
  return { disabledSites, httpAllowedSites };
}

export async function handleProtectionRequest(
  req: ProtectionRequest,
  ctx: ProtectionRequestContext,
): Promise<unknown> {
  const c = ctx.controller;
  const update = async (change: (s: Settings) => Partial<Settings>): Promise<Settings> => {
    const next = await ctx.store.update(change);
    await c.reconcile(next);
    return next;
  };
  switch (req.type) {
    case 'siteState': {
      if (!['upgrade', 'rulesets', 'off'].includes(req.state)) return { error: 'invalid-state' };
      if (typeof req.entry !== 'string' || withSiteState(c.settings, req.entry, req.state) === null)
        return { error: 'invalid-site' };
      return update((s) => withSiteState(s, req.entry, req.state) ?? {});
    }
    case 'allowlistImport': {
      if (typeof req.text !== 'string')
        return { ok: false, added: 0, problems: ['nothing to import'] };
      const parsed = parseHttpAllowlistPolicy(req.text);
      // All or nothing: a list with a bad entry changes nothing, and says which entry.
      if (parsed.problems.length > 0 || parsed.entries.length === 0)
        return {
          ok: false,
          added: 0,
          problems: parsed.problems.length > 0 ? parsed.problems : ['the list is empty'],
        };
      const before = c.settings.httpAllowedSites.length;
      const settings = await update((s) => ({
        httpAllowedSites: parsed.entries.reduce(
          (list, e) => addSite(list, e) ?? list,
          s.httpAllowedSites,
        ),
      }));
      return { ok: true, added: settings.httpAllowedSites.length - before, problems: [], settings };
    }
    case 'allowlistExport':
      return exportHttpAllowlistPolicy(c.settings.httpAllowedSites);
    case 'knownHosts':
      if (req.forget === true) {
        for (const h of ctx.protection.known.hosts(Date.now())) ctx.protection.forget(h);
        await ctx.protection.flush();
      }
      return {
        count: ctx.protection.known.hosts(Date.now()).length,
        thirdParty: ctx.protection.known.thirdPartySize,
      };
    case 'recheckLog':
      return parseRecheckState((await ctx.storage.get(RECHECK_STORAGE_KEY))[RECHECK_STORAGE_KEY])
        .restored;
    case 'channelAddUrl': {
      const fetched = await fetchChannelDefinition(req.url);
      if (!fetched.ok) return fetched;
      return addChannel(c, fetched.json);
    }
    default:
      return { error: `unknown request ${(req as { type?: unknown }).type}` };
  }
}
