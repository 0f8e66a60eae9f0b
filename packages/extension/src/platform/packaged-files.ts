/**
 * The names of the files in a packaged extension, shared by the code that reads them at run
 * time and the Node tool that writes them (packaging/), so neither imports the other.
 */

/** The background script (Chromium's service worker, Firefox's background script). */
export const BACKGROUND_SCRIPT = 'background.js';

/** The default rulesets, compiled to the engine's bundle. */
export const DEFAULT_BUNDLE_PATH = 'rules/default.bundle';

/** Chromium: the static ruleset of the default rulesets' DNR rules, and its id. */
export const STATIC_RULESET_ID = 'default';
export const STATIC_RULES_PATH = 'rules/dnr-default.json';

/** Chromium: the hosts whose main frames go to the handoff page. */
export const HANDOFF_SCOPE_PATH = 'rules/handoff.json';

export const POPUP_PAGE = 'ui/popup.html';
export const OPTIONS_PAGE = 'ui/options.html';
/** The fallback page: an upgrade failed, the user chooses what next. */
export const FALLBACK_PAGE = 'ui/fallback.html';
/** Chromium: the page that decides a main frame DNR could not and opens the result. */
export const HANDOFF_PAGE = 'ui/handoff.html';
