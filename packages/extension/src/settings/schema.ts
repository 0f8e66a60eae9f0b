import type { ChannelDefinition } from '@httpsify/engine/channels';

/**
 * Everything the extension persists in storage.local, one key per setting so that a corrupt
 * value damages only its own key. `rulesetOverrides` is the key the background already uses.
 * The version marks layouts that need converting; a new key with a default (`channels`) needs
 * none, so it did not change the version (older builds simply ignore the key).
 */
export const SCHEMA_VERSION = 1;

/** A rule the user wrote, kept as ruleset XML so the editor, import and export share one form. */
export interface UserRule {
  /** The ruleset name inside the XML (unique among user rules). */
  name: string;
  xml: string;
}

export interface Statistics {
  /** Requests upgraded by rulesets or HTTPS-first since the counters were reset. */
  upgrades: number;
  /** HTTPS-first attempts that ended on the fallback page or went back to HTTP. */
  fallbacks: number;
  /** Hosts seen over plain HTTP in main frames (newest last, capped). */
  httpHosts: string[];
}

/** A value that failed validation, kept so nothing the user owned is ever dropped silently. */
export interface RepairRecord {
  key: string;
  /** Why the value was rejected. */
  problem: string;
  /** JSON of the rejected value (truncated when huge). */
  original: string;
  at: number;
}

export interface Settings {
  schemaVersion: number;
  globalEnabled: boolean;
  /**
   * The protection mode (default on): every top-level http:// navigation tried over HTTPS, and
   * the subresources of hosts known to answer over HTTPS upgraded. A stored `false` is a user's
   * choice from when the mode was opt-in and is kept; an absent key takes the new default.
   */
  httpsFirst: boolean;
  mixedContent: boolean;
  /** Show the number of upgraded requests on the toolbar icon. */
  showBadge: boolean;
  /** Ruleset name → on/off, only where the user differs from the default. */
  rulesetOverrides: Record<string, boolean>;
  /** Hosts (with optional port) or wildcard patterns where the extension does nothing. */
  disabledSites: string[];
  /** Sites HTTPS-first leaves on HTTP ("Always allow HTTP for this site"); rulesets still apply. */
  httpAllowedSites: string[];
  userRules: UserRule[];
  /** Signed ruleset update channels the user subscribed to, earlier ones taking precedence. */
  channels: ChannelDefinition[];
  stats: Statistics;
  /** Repairs made to damaged storage, newest last (shown on the options page). */
  repairs: RepairRecord[];
  /** Plain-HTTP URL whose known answer tells an open network from a captive portal. */
  portalProbeUrl: string;
}

export type SettingKey = keyof Settings;

export const MAX_HTTP_HOSTS = 200;
export const MAX_REPAIRS = 50;

export function defaultSettings(): Settings {
  return {
    schemaVersion: SCHEMA_VERSION,
    globalEnabled: true,
    httpsFirst: true,
    mixedContent: false,
    showBadge: true,
    rulesetOverrides: {},
    disabledSites: [],
    httpAllowedSites: [],
    userRules: [],
    channels: [],
    stats: { upgrades: 0, fallbacks: 0, httpHosts: [] },
    repairs: [],
    portalProbeUrl: 'http://detectportal.firefox.com/success.txt',
  };
}

export const SETTING_KEYS = Object.keys(defaultSettings()) as SettingKey[];

/** Settings a user export carries (repairs and the version marker stay machine-local). */
export const EXPORTED_KEYS = [
  'globalEnabled',
  'httpsFirst',
  'mixedContent',
  'showBadge',
  'rulesetOverrides',
  'disabledSites',
  'httpAllowedSites',
  'userRules',
  'channels',
] as const;
export type ExportedKey = (typeof EXPORTED_KEYS)[number];
