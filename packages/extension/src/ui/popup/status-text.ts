import type { PageStatus } from '../../protocol/ui-protocol.js';
import { t } from '../shared/i18n.js';

/** The popup's status line: a tone, a title, the reason, and the way through if there is one. */
export interface StatusText {
  tone: 'ok' | 'warn' | 'neutral';
  title: string;
  detail: string;
  action?: string;
  /**
   * What the action does: remove the cause (`pageRetry`, the default), switch something on, or
   * load the page over HTTP past the browser's own upgrade (`open-http`).
   */
  act?: 'retry' | 'turn-on' | 'https-first-on' | 'open-http';
  /** A second way through: the browser's own settings page, where the browser lets us open it. */
  settings?: { label: string; url: string };
}

/** Which browser the page runs in: the extension's own origin says. */
export type BrowserName = 'chromium' | 'firefox';

export function currentBrowser(): BrowserName {
  return globalThis.location?.protocol === 'moz-extension:' ? 'firefox' : 'chromium';
}

/**
 * The browser's upgraded the page by itself although the user asked httpsify for HTTP there:
 * the one step that works, named for that browser (measured, docs/browser-upgrades.md).
 * Chromium lets an extension load the page past its HTTPS-Upgrades and open its settings page;
 * Firefox answers any redirect back to HTTP under HTTPS-Only with its error page and refuses
 * to open about:preferences from an extension, so it gets the exact steps instead.
 */
function browserKeepsHttps(browser: BrowserName): StatusText {
  if (browser === 'firefox')
    return {
      tone: 'warn',
      title: t('statusHttpsByBrowserKept'),
      detail: t('statusHttpsByBrowserFirefoxSteps'),
    };
  return {
    tone: 'warn',
    title: t('statusHttpsByBrowserKept'),
    detail: t('statusHttpsByBrowserChromiumSteps'),
    action: t('statusOpenOverHttpAction'),
    act: 'open-http',
    settings: { label: t('statusChromiumSettingsAction'), url: 'chrome://settings/security' },
  };
}

/** The status line in words. Kinds this page does not know yet are shown by `secure` alone. */
export function statusText(s: PageStatus, browser: BrowserName = currentBrowser()): StatusText {
  const retry = t('popupRetry');
  switch (s.kind) {
    case 'not-a-web-page':
      return {
        tone: 'neutral',
        title: t('statusNotAWebPage'),
        detail: t('statusNotAWebPageDetail'),
      };
    case 'extension-off':
      return {
        tone: 'neutral',
        title: t('statusOff'),
        detail: t('statusOffDetail'),
        action: t('statusOffAction'),
        act: 'turn-on',
      };
    case 'https-by-ruleset':
      return {
        tone: 'ok',
        title: t('statusHttpsByRuleset'),
        detail: t('statusHttpsByRulesetDetail', s.ruleset),
      };
    case 'https-by-upgrade':
      return {
        tone: 'ok',
        title: t('statusHttpsByUpgrade'),
        detail: t('statusHttpsByUpgradeDetail'),
      };
    case 'https-already':
      return { tone: 'ok', title: t('statusSecure'), detail: t('statusHttpsAlreadyDetail') };
    case 'https-by-site':
      return { tone: 'ok', title: t('statusSecure'), detail: t('statusHttpsBySiteDetail') };
    case 'https-by-browser':
      return s.userWantsHttp
        ? browserKeepsHttps(browser)
        : {
            tone: 'ok',
            title: t('statusHttpsByBrowser'),
            detail: t(
              browser === 'firefox'
                ? 'statusHttpsByBrowserFirefoxDetail'
                : 'statusHttpsByBrowserChromiumDetail',
            ),
          };
    case 'http-site-off':
      return {
        tone: 'warn',
        title: t('statusHttpSiteOff'),
        detail: t('statusHttpSiteOffDetail', s.entry),
        action: t('statusHttpSiteOffAction'),
      };
    case 'http-loop-guard':
      return {
        tone: 'warn',
        title: t('statusHttpLoopGuard'),
        detail: t('statusHttpLoopGuardDetail', s.host),
        action: retry,
      };
    case 'http-allowed':
      return {
        tone: 'warn',
        title: t('statusHttpAllowed'),
        detail: t('statusHttpAllowedDetail', s.entry),
        action: retry,
      };
    case 'http-upgrade-failed':
      return s.onFallbackPage
        ? {
            tone: 'warn',
            title: t('statusFallbackPage', s.host),
            detail: t('statusFallbackPageDetail'),
            action: retry,
          }
        : {
            tone: 'warn',
            title: t('statusHttpUpgradeFailed'),
            detail: t('statusHttpUpgradeFailedDetail', s.host),
            action: retry,
          };
    case 'http-ruleset-off':
      return {
        tone: 'warn',
        title: t('statusHttpRulesetOff'),
        detail: t('statusHttpRulesetOffDetail', s.rulesets.join('”, “')),
        action: t('statusHttpRulesetOffAction'),
      };
    case 'http-ruleset-excludes':
      return {
        tone: 'neutral',
        title: t('statusHttpRulesetExcludes'),
        detail: t('statusHttpRulesetExcludesDetail', s.ruleset),
      };
    case 'http-not-yet':
      return {
        tone: 'warn',
        title: t('statusHttpNotYet'),
        detail: t('statusHttpNotYetDetail'),
        action: t('statusHttpNotYetAction'),
      };
    case 'http-no-rule':
      return s.localAddress && s.httpsFirst
        ? { tone: 'neutral', title: t('statusHttpLocal'), detail: t('statusHttpLocalDetail') }
        : s.httpsFirst
          ? { tone: 'warn', title: t('statusHttpNoRule'), detail: t('statusHttpNoRuleDetail') }
          : {
              tone: 'warn',
              title: t('statusHttpNoRule'),
              detail: t('statusHttpNoRuleDetail'),
              action: t('statusHttpsFirstOnAction'),
              act: 'https-first-on',
            };
    default: {
      const other = s as PageStatus;
      return {
        tone: other.secure ? 'ok' : 'warn',
        title: t(other.secure ? 'statusSecure' : 'statusNotSecure'),
        detail: '',
        action: other.retry ? retry : undefined,
      };
    }
  }
}
