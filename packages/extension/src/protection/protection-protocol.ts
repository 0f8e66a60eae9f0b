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
  | { type: 'channelAddUrl'; url: string };

export const PROTECTION_REQUEST_TYPES = [
  'siteState',
  'allowlistImport',
  'allowlistExport',
  'knownHosts',
  'recheckLog',
  'channelAddUrl',
] as const;

export interface AllowlistImportResult {
  ok: boolean;
  added: number;
  problems: string[];
}
