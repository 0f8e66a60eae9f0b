import type { Diagnostic } from '@httpsify/engine';
import type { ChannelStatus } from '../channels/channel-service.js';
import type { ChannelToConfirm, ImportChange } from '../settings/import.js';
import type { Settings } from '../settings/schema.js';

/** The port extension pages open to the background for everything the UI shows and changes. */
export const UI_PORT_NAME = 'httpsify-ui';

export type SiteListName = 'disabledSites' | 'httpAllowedSites';

export type UiRequest =
  | { type: 'settings' }
  | { type: 'popup'; tabId: number }
  | { type: 'setFlag'; flag: 'globalEnabled' | 'httpsFirst' | 'mixedContent' | 'showBadge'; value: boolean }
  | { type: 'setRuleset'; name: string; active: boolean | null }
  | { type: 'resetRulesets'; names?: string[] }
  | { type: 'rulesetIndex' }
  | { type: 'rulesetsForHost'; host: string }
  | { type: 'siteAdd'; list: SiteListName; entry: string }
  | { type: 'siteRemove'; list: SiteListName; entry: string }
  | { type: 'httpOnce'; url: string }
  | { type: 'userRuleSave'; xml: string; replacing?: string }
  | { type: 'userRuleRemove'; name: string }
  | { type: 'userRulesImport'; xml: string }
  | { type: 'exportSettings' }
  /** A settings file's text: checked whole, answered with what importing it would change. */
  | { type: 'importPreview'; text: string }
  /** Applies a settings file (all or nothing); channels it adds or redefines must be named here. */
  | { type: 'importApply'; text: string; confirmedChannels: string[] }
  | { type: 'resetStats' }
  | { type: 'clearRepairs' }
  | { type: 'channelStatus' }
  /** A channel definition as pasted (JSON text, checked by the background). */
  | { type: 'channelAdd'; json: string }
  | { type: 'channelRemove'; name: string }
  /** "Check now": one channel, or every channel without a name; answers when the checks are done. */
  | { type: 'channelCheck'; name?: string };

/** A channel on the options page. */
export interface ChannelRow extends ChannelStatus {
  /** Why this browser does not (fully) apply the channel (Chromium: scope or rule limits). */
  platformProblem: string | null;
}

export type ChannelAddResult = { ok: true; settings: Settings; channels: ChannelRow[] } | { ok: false; error: string };

export interface RulesetRow {
  name: string;
  active: boolean;
  defaultActive: boolean;
  /** The `default_off` reason or platform, shown as tooltip; null for stable rulesets. */
  note: string | null;
  user: boolean;
}

export interface PopupState {
  settings: Pick<Settings, 'globalEnabled' | 'httpsFirst'>;
  /** Null when the tab shows something other than an http(s) page. */
  site: { url: string; scheme: string; hostWithPort: string; disabledBy: string | null; httpAllowedBy: string | null } | null;
  rulesets: RulesetRow[];
  upgraded: number;
  httpsFirstPage: boolean;
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
export type ImportPreview = { ok: true; changes: ImportChange[]; channels: ChannelToConfirm[] } | { ok: false; problems: string[] };

export type ImportApplyResult = { ok: true; settings: Settings } | { ok: false; problems: string[] };

export interface UiError {
  error: string;
}
