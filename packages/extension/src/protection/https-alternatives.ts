/**
 * Before a failed upgrade ends on the fallback page (and so, maybe, on plain HTTP), the HTTPS
 * addresses the data suggests are tried: the `www.` twin of the host (`example.com` <->
 * `www.example.com`), preferring one a ruleset covers, whose own rewrite is then used.
 * Probes ask only for `https://host/`: the path the user asked for stays in the browser.
 */
import { isHttpsFirstExempt } from '../site-rules/exempt.js';

export const PROBE_TIMEOUT_MS = 3000;

export interface Alternative {
  host: string;
  /** Where the tab goes if the probe answers: the ruleset's rewrite, or the https:// twin. */
  url: string;
  /** Name of the ruleset that rewrote `url`, if any. */
  ruleset: string | null;
}

/** The `www.` twin of a host; null for hosts that have none (IP literals, local names). */
export function wwwTwin(host: string): string | null {
  if (isHttpsFirstExempt(host) || /^[0-9.]+$/.test(host) || host.startsWith('[')) return null;
  if (host.startsWith('www.')) {
    const apex = host.slice(4);
    return apex.includes('.') ? apex : null;
  }
  return `www.${host}`;
}

/**
 * The alternatives for a failed `http://` URL, in the order to try them. `rewrite` is the
 * rulesets' decision for a URL (user rules, channels, defaults).
 */
export function httpsAlternatives(
  httpUrl: string,
  rewrite: (url: string) => { rewritten: string | null; ruleset: string | null },
): Alternative[] {
  let u: URL;
  try {
    u = new URL(httpUrl);
  } catch {
    return [];
  }
  const twin = wwwTwin(u.hostname);
  if (twin === null) return [];
  const alt = new URL(u.href);
  alt.hostname = twin;
  const byRules = rewrite(alt.href);
  if (byRules.rewritten !== null && byRules.rewritten.startsWith('https:'))
    return [{ host: twin, url: byRules.rewritten, ruleset: byRules.ruleset }];
  alt.protocol = 'https:';
  return [{ host: twin, url: alt.href, ruleset: null }];
}

/** Just the scheme, host and port of a URL, as a probe sends it. */
export function originOnly(url: string, scheme: 'http' | 'https'): string {
  const u = new URL(url);
  return `${scheme}://${u.host}/`;
}

/**
 * Asks `url` (an origin) with HEAD, no cookies, no redirects followed: any answer, redirects
 * included, means the server speaks that scheme; a 5xx or a network error means it does not.
 * With `successOnly`, only a 2xx answer is `ok`: a host whose every page is a 404 (shared hosts
 * and CDNs answer so for names they do not serve) speaks HTTPS but is not the site.
 */
export async function probe(
  url: string,
  fetchFn: typeof fetch = fetch,
  timeoutMs = PROBE_TIMEOUT_MS,
  successOnly = false,
): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const r = await fetchFn(url, {
      method: 'HEAD',
      redirect: 'manual',
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
      signal: controller.signal,
    });
    if (successOnly)
      return r.status >= 200 && r.status < 300
        ? 'ok'
        : r.type === 'opaqueredirect'
          ? 'redirect'
          : `HTTP ${r.status}`;
    if (r.type === 'opaqueredirect' || r.status < 500) return 'ok';
    return `HTTP ${r.status}`;
  } catch (e) {
    return controller.signal.aborted
      ? 'timeout'
      : e instanceof Error
        ? e.message || e.name
        : String(e);
  } finally {
    clearTimeout(timer);
  }
}
