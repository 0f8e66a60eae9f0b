import type { Diagnostic } from '@httpsify/engine';
import type { ChannelStatus } from '../channels/channel-service.js';
import type { ProtectionRequest } from '../protection/protection-protocol.js';
import type { LibraryRequest } from '../library/library-protocol.js';
import type { ChannelToConfirm, ImportChange, UserRuleToConfirm } from '../settings/import-plan.js';
import type { Settings } from '../settings/schema.js';

/** The port extension pages open to the background for everything the UI shows and changes. */
export const UI_PORT_NAME = 'httpsify-ui';

export type SiteListName = 'disabledSites' | 'httpAllowedSites';

export type UiRequest =
  | { type: 'settings' }
  | { type: 'popup'; tabId: number }
  /** Undo what keeps the tab's page on HTTP (see PageStatus.retry); the popup then reloads the tab. */
  | { type: 'pageRetry'; tabId: number }
  /**
   * Load the tab's page at its http:// address, past the browser's own upgrade where an
   * extension can (Chromium, see docs/browser-upgrades.md): after the user chose "Off" or
   * "Rules only" for the site, or switched httpsify off.
   */
  | { type: 'openOverHttp'; tabId: number; url: string }
  /** Version, bundled ruleset date and counts for the options page. */
  | { type: 'about' }
  /** One ruleset's targets and rules, for the options page's viewer. */
  | { type: 'rulesetDetails'; name: string }
  | {
      type: 'setFlag';
      flag: 'globalEnabled' | 'httpsFirst' | 'mixedContent' | 'showBadge';
      value: boolean;
    }
  | { type: 'setRuleset'; name: string; active: boolean | null }
  | { type: 'resetRulesets'; names?: string[] }
  | { type: 'rulesetIndex' }
  /** Each ruleset's first target hosts as one short text ("a.com, b.com, +3"), by name; asked after the list shows (24k rulesets take a second). */
  | { type: 'rulesetHosts' }
  | { type: 'rulesetsForHost'; host: string }
  | { type: 'siteAdd'; list: SiteListName; entry: string }
  | { type: 'siteRemove'; list: SiteListName; entry: string }
  /** `tabId`: for that tab only (a sign-in network's fallback page); else every tab. */
  | { type: 'httpOnce'; url: string; tabId?: number }
  /**
   * Behind a sign-in network (captive portal): open the network's sign-in page in a new tab,
   * through the portal probe's own http:// address (the network answers it with its sign-in
   * page), never the site's.
   */
  | { type: 'portalSignIn' }
  | { type: 'userRuleSave'; xml: string; replacing?: string }
  | { type: 'userRuleRemove'; name: string }
  | { type: 'userRulesImport'; xml: string }
  | { type: 'exportSettings' }
  /** A settings file's text: checked whole, answered with what importing it would change. */
  | { type: 'importPreview'; text: string }
  /** Applies a settings file (all or nothing); channels it adds or redefines must be named here. */
  | {
      type: 'importApply';
      text: string;
      confirmedChannels: string[];
      confirmedUserRules?: string[];
    }
  | { type: 'resetStats' }
  | { type: 'clearRepairs' }
  | { type: 'channelStatus' }
  /** What of the settings this browser cannot hold (Chromium's rule limits). */
  | { type: 'ruleLimits' }
  /** A channel definition as pasted (JSON text, checked by the background). */
  /** Checks and describes a pasted definition without adding it (the user confirms it first). */
  | { type: 'channelPreview'; json: string }
  | { type: 'channelAdd'; json: string }
  | { type: 'channelRemove'; name: string }
  /** "Check now": one channel, or every channel without a name; answers when the checks are done. */
  | { type: 'channelCheck'; name?: string }
  /** The protection mode's requests (src/protection/protection-protocol.ts). */
  | ProtectionRequest
  /** The imported ruleset library (src/library/library-protocol.ts). */
  | LibraryRequest;

/** A channel on the options page. */
export interface ChannelRow extends ChannelStatus {
  /** Why this browser does not (fully) apply the channel (Chromium: scope or rule limits). */
  platformProblem: string | null;
}

export type ChannelAddResult =
  { ok: true; settings: Settings; channels: ChannelRow[] } | { ok: false; error: string };

export interface RulesetRow {
  name: string;
  active: boolean;
  defaultActive: boolean;
  /** The `default_off` reason or platform, shown as tooltip; null for stable rulesets. */
  note: string | null;
  user: boolean;
}

/**
 * Why the page in a tab is, or is not, on HTTPS: the line at the top of the popup. Computed in
 * the background (`page-status.ts`). The union is open: new protection modes add kinds of their
 * own (a page that does not know a kind shows it by `secure` alone, with no action). `retry`
 * says whether `pageRetry` can undo what keeps the page on HTTP (then reload the tab).
 */
export type PageStatus = PageStatusBase &
  (
    | { kind: 'not-a-web-page' }
    /** The global switch is off. */
    | { kind: 'extension-off' }
    /** A ruleset (or a user rule) upgraded the page. */
    | { kind: 'https-by-ruleset'; ruleset: string }
    /** HTTPS-first upgraded the page (no ruleset covers it). */
    | { kind: 'https-by-upgrade' }
    /** The page was HTTPS without us: the address or link asked for https://. */
    | { kind: 'https-already' }
    /**
     * The browser moved the page to HTTPS by itself (Chrome's HTTPS-Upgrades or "Always use
     * secure connections", Firefox's HTTPS-Only or HTTPS-First, HSTS). `userWantsHttp`: the user
     * told httpsify to leave the site on HTTP (off, "Rules only", or httpsify off), which only
     * the browser's own setting can now do (see docs/browser-upgrades.md).
     */
    | { kind: 'https-by-browser'; userWantsHttp: boolean }
    /** The site's own redirect sent its http:// address to HTTPS. */
    | { kind: 'https-by-site' }
    /** The user switched httpsify off for this site (`entry` of disabledSites). */
    | { kind: 'http-site-off'; entry: string }
    /** Redirect-loop protection: the site sent HTTPS back to HTTP; left alone for this session. */
    | { kind: 'http-loop-guard'; host: string }
    /** "Always allow HTTP for this site" (`entry` of httpAllowedSites) while HTTPS-first is on. */
    | { kind: 'http-allowed'; entry: string }
    /**
     * HTTPS failed and the user chose "Open over HTTP this time" (held for the session), or the
     * tab shows the fallback page itself (`onFallbackPage`).
     */
    | { kind: 'http-upgrade-failed'; host: string; onFallbackPage: boolean }
    /** Rulesets cover the site but the user switched them off. */
    | { kind: 'http-ruleset-off'; rulesets: string[] }
    /** A ruleset's exclusion covers this address: its authors know it breaks over HTTPS. */
    | { kind: 'http-ruleset-excludes'; ruleset: string }
    /** A rule (or HTTPS-first) covers the page now but it was loaded before: a reload upgrades it. */
    | { kind: 'http-not-yet' }
    /** No ruleset covers the site and HTTPS-first is off, or the site is a local address it never tries. */
    | { kind: 'http-no-rule'; httpsFirst: boolean; localAddress: boolean }
  );

export interface PageStatusBase {
  /** The page itself is loaded over HTTPS. */
  secure: boolean;
  /** `pageRetry` can remove the reason the page stayed on HTTP. */
  retry: boolean;
}

export type PageStatusKind = PageStatus['kind'];

export interface PopupState {
  status: PageStatus;
  settings: Pick<Settings, 'globalEnabled' | 'httpsFirst'>;
  /** Null when the tab shows something other than an http(s) page. */
  site: {
    url: string;
    scheme: string;
    hostWithPort: string;
    disabledBy: string | null;
    httpAllowedBy: string | null;
  } | null;
  rulesets: RulesetRow[];
  upgraded: number;
  httpsFirstPage: boolean;
  /** How many rulesets the user switched away from their default (the reset has work to do). */
  overrideCount: number;
}

/** Every ruleset, as parallel arrays (24k rows must cross the port cheaply). */
export interface RulesetIndex {
  names: string[];
  active: boolean[];
  defaultActive: boolean[];
  notes: (string | null)[];
  user: boolean[];
}

export interface SaveResult {
  ok: boolean;
  errors: Diagnostic[];
  settings?: Settings;
}

export interface ImportResult {
  ok: boolean;
  problems: string[];
  added?: number;
  settings?: Settings;
}

/** A settings file checked: every problem (nothing will change), or what importing it changes. */
export type ImportPreview =
  | {
      ok: true;
      changes: ImportChange[];
      channels: ChannelToConfirm[];
      userRules: UserRuleToConfirm[];
    }
  | { ok: false; problems: string[] };

export type ImportApplyResult =
  { ok: true; settings: Settings } | { ok: false; problems: string[] };

/** A part of the settings Chromium's rule limits leave out (the options page words it by part). */
export type { RuleLimit } from '../dnr/rule-limits.js';
/**
 * storage.local key where Chromium's rule writer keeps what it could not write, across worker
 * restarts; the options page follows its changes to keep its notice live.
 */
export const RULE_REFUSALS_KEY = 'dnrRefusals';

export interface AboutInfo {
  version: string;
  /** Unix seconds of the bundled rulesets (their TIMESTAMP). */
  rulesetsTimestamp: number;
  rulesetCount: number;
}

export interface RulesetDetails {
  name: string;
  defaultOff: string | null;
  hosts: string[];
  rules: { from: string; to: string }[];
  exclusions: string[];
  /** Where the ruleset comes from: the bundled defaults, a user rule or an update channel's name. */
  source: string;
}
