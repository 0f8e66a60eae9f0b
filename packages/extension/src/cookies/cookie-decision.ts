import type { CookieDeps } from './secure-cookies.js';
import type { ProtectionRuntime } from '../protection/protection-runtime.js';
import type { ProtectionSnapshot } from '../decision/snapshot.js';

/** What the decision reads of the settings: their snapshot (the controller, from above, is one). */
export interface CookieSettings {
  readonly snapshot: ProtectionSnapshot;
}

export interface CookieSources<C extends CookieSettings> {
  controller: Promise<C>;
  protection: Pick<ProtectionRuntime, 'upgradesHost'>;
}

/** The rulesets' `<securecookie>` decision as this browser applies it. */
export type RulesetCookieDecision<C> = (
  c: C,
  host: string,
  cookie: { domain: string; name: string },
) => boolean | Promise<boolean>;

/**
 * Whether a cookie set without `Secure` gets it: on a host known to answer over HTTPS that the
 * protection mode upgrades (as NoScript did), else as the rulesets decide where this browser's
 * rules really upgrade the host (a cookie made Secure on a host that stays on HTTP would stop
 * being sent).
 */
export function cookieDecision<C extends CookieSettings>(
  ui: CookieSources<C>,
  rulesets: RulesetCookieDecision<C>,
): CookieDeps['shouldSecure'] {
  return async (cookie) => {
    const c = await ui.controller;
    const host = cookie.domain.replace(/^\.+/, '');
    if (ui.protection.upgradesHost(c.snapshot, host)) return true;
    return rulesets(c, host, cookie);
  };
}
