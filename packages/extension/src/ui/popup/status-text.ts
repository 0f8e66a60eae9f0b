import type { PageStatus } from '../../protocol/ui-protocol.js';
import { t } from '../shared/i18n.js';

/** The popup's status line: a tone, a title, the reason, and the way through if there is one. */
export interface StatusText {
  tone: 'ok' | 'warn' | 'neutral';
  title: string;
  detail: string;
  action?: string;
  /** What the action does: remove the cause (`pageRetry`, the default) or switch something on. */
  act?: 'retry' | 'turn-on' | 'https-first-on';
}

/** The status line in words. Kinds this page does not know yet are shown by `secure` alone. */
export function statusText(s: PageStatus): StatusText {
  const retry = t('popupRetry');
  switch (s.kind) {
    case 'not-a-web-page':
      return { tone: 'neutral', title: t('statusNotAWebPage'), detail: t('statusNotAWebPageDetail') };
    case 'extension-off':
      return { tone: 'neutral', title: t('statusOff'), detail: t('statusOffDetail'), action: t('statusOffAction'), act: 'turn-on' };
    case 'https-by-ruleset':
      return { tone: 'ok', title: t('statusHttpsByRuleset'), detail: t('statusHttpsByRulesetDetail', s.ruleset) };
    case 'https-by-upgrade':
      return { tone: 'ok', title: t('statusHttpsByUpgrade'), detail: t('statusHttpsByUpgradeDetail') };
    case 'https-already':
      return { tone: 'ok', title: t('statusSecure'), detail: t('statusHttpsAlreadyDetail') };
    case 'http-site-off':
      return { tone: 'warn', title: t('statusHttpSiteOff'), detail: t('statusHttpSiteOffDetail', s.entry), action: t('statusHttpSiteOffAction') };
    case 'http-loop-guard':
      return { tone: 'warn', title: t('statusHttpLoopGuard'), detail: t('statusHttpLoopGuardDetail', s.host), action: retry };
    case 'http-allowed':
      return { tone: 'warn', title: t('statusHttpAllowed'), detail: t('statusHttpAllowedDetail', s.entry), action: retry };
    case 'http-upgrade-failed':
      return s.onFallbackPage
        ? { tone: 'warn', title: t('statusFallbackPage', s.host), detail: t('statusFallbackPageDetail'), action: retry }
        : { tone: 'warn', title: t('statusHttpUpgradeFailed'), detail: t('statusHttpUpgradeFailedDetail', s.host), action: retry };
    case 'http-ruleset-off':
      return {
        tone: 'warn',
        title: t('statusHttpRulesetOff'),
        detail: t('statusHttpRulesetOffDetail', s.rulesets.join('”, “')),
        action: t('statusHttpRulesetOffAction'),
      };
    case 'http-ruleset-excludes':
      return { tone: 'neutral', title: t('statusHttpRulesetExcludes'), detail: t('statusHttpRulesetExcludesDetail', s.ruleset) };
    case 'http-not-yet':
      return { tone: 'warn', title: t('statusHttpNotYet'), detail: t('statusHttpNotYetDetail'), action: t('statusHttpNotYetAction') };
    case 'http-no-rule':
      return s.localAddress && s.httpsFirst
        ? { tone: 'neutral', title: t('statusHttpLocal'), detail: t('statusHttpLocalDetail') }
        : s.httpsFirst
          ? { tone: 'warn', title: t('statusHttpNoRule'), detail: t('statusHttpNoRuleDetail') }
          : { tone: 'warn', title: t('statusHttpNoRule'), detail: t('statusHttpNoRuleDetail'), action: t('statusHttpsFirstOnAction'), act: 'https-first-on' };
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
