/** What the pages ask of the protection mode (over the UI port; see ui-protocol.ts). */
export type SiteState = 'upgrade' | 'rulesets' | 'off';

export type ProtectionRequest =
  /** Puts a site entry (host, host:port or *.domain) in one of the three states. */
  | { type: 'siteState'; entry: string; state: SiteState }
  /** Chrome `HttpAllowlist` policy JSON into the "rulesets only" list. */
  | { type: 'allowlistImport'; text: string }
  | { type: 'allowlistExport' }
  /** How many hosts are known to answer over HTTPS; `forget` empties the store. */
  | { type: 'knownHosts'; forget?: boolean }
  /** Sites the re-check put back to "upgrade everything", newest last. */
  | { type: 'recheckLog' }
  /** Subscribes to an update channel given by the URL of its JSON definition. */
  | { type: 'channelAddUrl'; url: string }
  /** "Is this page secure, and why" for a tab. */
  | { type: 'pageStatus'; tabId: number };

export const PROTECTION_REQUEST_TYPES = ['siteState', 'allowlistImport', 'allowlistExport', 'knownHosts', 'recheckLog', 'channelAddUrl', 'pageStatus'] as const;

/**
 * Why a page is (or is not) on HTTPS. An open union: pages show the reasons they know and a
 * generic line for others. `how` on the HTTP reasons names the setting that changes it.
 */
export type PageStatus =
  | { secure: true; reason: 'ruleset'; ruleset: string }
  | { secure: true; reason: 'upgrade' }
  | { secure: true; reason: 'alternative'; from: string }
  | { secure: true; reason: 'browser' }
  | { secure: true; reason: 'https' }
  | { secure: false; reason: 'loop-guard'; host: string }
  | { secure: false; reason: 'site-off'; entry: string }
  | { secure: false; reason: 'site-rulesets-only'; entry: string }
  | { secure: false; reason: 'opened-over-http' }
  | { secure: false; reason: 'failed-upgrade' }
  | { secure: false; reason: 'local' }
  | { secure: false; reason: 'captive-portal' }
  | { secure: false; reason: 'mode-off' }
  | { secure: false; reason: 'all-off' }
  | { secure: false; reason: 'not-web' };

export interface AllowlistImportResult {
  ok: boolean;
  added: number;
  problems: string[];
}
