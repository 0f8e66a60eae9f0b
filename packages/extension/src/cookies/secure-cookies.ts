/** The fields of a browser cookie that securing one needs (chrome.cookies.Cookie and Firefox's). */
export interface CookieLike {
  name: string;
  value: string;
  domain: string;
  hostOnly: boolean;
  path: string;
  secure: boolean;
  httpOnly: boolean;
  sameSite?: string;
  expirationDate?: number;
  storeId: string;
  firstPartyDomain?: string;
}

export interface CookieSetDetails {
  url: string;
  name: string;
  value: string;
  path: string;
  secure: true;
  httpOnly: boolean;
  storeId: string;
  domain?: string;
  sameSite?: string;
  expirationDate?: number;
  firstPartyDomain?: string;
}

/**
 * The same cookie with `Secure` set. Host-only cookies must stay host-only, so `domain` is only
 * passed for domain cookies; a session cookie stays a session cookie (no expiry).
 */
export function securedCookie(cookie: CookieLike): CookieSetDetails {
  const host = cookie.domain.replace(/^\.+/, '');
  const details: CookieSetDetails = {
    url: `https://${host}${cookie.path}`,
    name: cookie.name,
    value: cookie.value,
    path: cookie.path,
    secure: true,
    httpOnly: cookie.httpOnly,
    storeId: cookie.storeId,
  };
  if (!cookie.hostOnly) details.domain = cookie.domain;
  if (cookie.sameSite !== undefined && cookie.sameSite !== 'unspecified')
    details.sameSite = cookie.sameSite;
  if (cookie.expirationDate !== undefined) details.expirationDate = cookie.expirationDate;
  if (cookie.firstPartyDomain !== undefined) details.firstPartyDomain = cookie.firstPartyDomain;
  return details;
}

export interface CookieDeps {
  /** `<securecookie>` decision for hosts the active rulesets upgrade (Engine.shouldSecureCookie). */
  shouldSecure(cookie: { domain: string; name: string }): boolean | Promise<boolean>;
  /** Hosts given up on for this session (redirect loops) keep their cookies as they are. */
  isHostBlocked(host: string): boolean;
  set(details: CookieSetDetails): Promise<unknown>;
}

/** `cookies.onChanged` handler; resolves to whether the cookie was re-set with `Secure`. */
export function createCookieHandler(
  deps: CookieDeps,
): (change: { removed: boolean; cookie: CookieLike }) => Promise<boolean> {
  return async ({ removed, cookie }) => {
    // Our own re-set fires onChanged again, with secure: true, and stops here.
    if (removed || cookie.secure) return false;
    if (deps.isHostBlocked(cookie.domain)) return false;
    if (!(await deps.shouldSecure({ domain: cookie.domain, name: cookie.name }))) return false;
    await deps.set(securedCookie(cookie));
    return true;
  };
}
