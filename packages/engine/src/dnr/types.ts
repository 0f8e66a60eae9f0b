/**
 * The subset of Chromium's declarativeNetRequest rule shape that httpsify emits. Kept as plain
 * interfaces (no `chrome` typings) so the compiler and emulator run in Node and in the extension.
 */
export type DnrResourceType =
  | 'main_frame'
  | 'sub_frame'
  | 'stylesheet'
  | 'script'
  | 'image'
  | 'font'
  | 'object'
  | 'xmlhttprequest'
  | 'ping'
  | 'csp_report'
  | 'media'
  | 'websocket'
  | 'webtransport'
  | 'webbundle'
  | 'other';

/**
 * Every type, listed explicitly: a rule without `resourceTypes` skips `main_frame`, and a page
 * navigation is exactly what must be upgraded.
 */
export const ALL_RESOURCE_TYPES: readonly DnrResourceType[] = [
  'main_frame',
  'sub_frame',
  'stylesheet',
  'script',
  'image',
  'font',
  'object',
  'xmlhttprequest',
  'ping',
  'csp_report',
  'media',
  'websocket',
  'webtransport',
  'webbundle',
  'other',
];

export interface DnrCondition {
  urlFilter?: string;
  regexFilter?: string;
  isUrlFilterCaseSensitive?: boolean;
  requestDomains?: string[];
  excludedRequestDomains?: string[];
  resourceTypes?: DnrResourceType[];
  /** Session rules only. */
  tabIds?: number[];
  excludedTabIds?: number[];
  /** The initiator's host or a parent (the extension's own rules; the compiler never writes it). */
  initiatorDomains?: string[];
  excludedInitiatorDomains?: string[];
}

export interface DnrRedirect {
  regexSubstitution?: string;
  url?: string;
  /** `path` replaces the whole path; the query stays (Chromium's URLTransform). */
  transform?: { scheme?: string; host?: string; path?: string };
}

export type DnrAction =
  | { type: 'upgradeScheme' }
  | { type: 'allow' }
  /** Allows the frame and everything it loads (main_frame / sub_frame rules only). */
  | { type: 'allowAllRequests' }
  | { type: 'redirect'; redirect: DnrRedirect };

export interface DnrRule {
  id: number;
  priority: number;
  action: DnrAction;
  condition: DnrCondition;
}

/** Chromium's published limits (declarative_net_request.idl, constants.h). */
export const DNR_LIMITS = {
  /** Regex rules across all enabled static rulesets; dynamic+session rules are counted apart. */
  regexRules: 1000,
  /** RE2 `max_mem` for one compiled regex, in bytes. */
  regexMemoryBytes: 2048,
  guaranteedStaticRules: 30_000,
  staticRulesets: 100,
  enabledStaticRulesets: 50,
  dynamicRules: 30_000,
  unsafeDynamicRules: 5000,
  sessionRules: 5000,
  unsafeSessionRules: 5000,
} as const;
