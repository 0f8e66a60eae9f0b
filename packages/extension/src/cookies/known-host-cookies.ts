import { ext } from '../platform/browser-api.js';
import { securedCookie, type CookieLike } from './secure-cookies.js';

/**
 * A host just became known to answer over HTTPS: cookies it set before then get the same
 * treatment as later ones (re-set with `Secure`), when the protection mode upgrades the host.
 */
export async function secureKnownHostCookies(
  host: string,
  upgradesHost: (host: string) => boolean,
): Promise<void> {
  if (!upgradesHost(host)) return;
  const cookies = (await ext.cookies.getAll({ domain: host }).catch(() => [])) as CookieLike[];
  for (const cookie of cookies) {
    if (cookie.secure || cookie.domain.replace(/^\.+/, '') !== host) continue;
    await ext.cookies
      .set(securedCookie(cookie) as chrome.cookies.SetDetails)
      .catch(() => undefined);
  }
}
