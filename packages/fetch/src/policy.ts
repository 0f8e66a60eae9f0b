/**
 * How far a client goes to stay on HTTPS:
 * - `rules`: only what the rulesets rewrite; other http:// URLs are fetched as they are;
 * - `prefer`: the rulesets, then HTTPS for every other http:// URL, falling back to the http://
 *   URL when the HTTPS attempt cannot connect (refused, TLS failure, no answer in time);
 * - `force`: the rulesets, then HTTPS for every other http:// URL; nothing is sent over
 *   plain HTTP, and a failed HTTPS attempt is an error.
 */
export type Policy = 'rules' | 'prefer' | 'force';

export const POLICIES: readonly Policy[] = ['rules', 'prefer', 'force'];

/** Anything that rewrites URLs with rulesets: an `Engine`, a `ScopedEngine`, or your own. */
export interface Rewriter {
  rewrite(url: string): string | null;
}

/** Why a URL changed, for `onUpgrade`. */
export type UpgradeReason = 'ruleset' | 'prefer' | 'force';

export interface RequestPlan {
  /** The URL to request first. */
  url: string;
  /** `prefer` only: the URL to request if `url` cannot be reached. */
  fallback: string | null;
  /** null when the URL is requested as it is. */
  reason: UpgradeReason | null;
}

/** Request headers that carry credentials (the Fetch standard drops these on a cross-origin redirect). */
export const CREDENTIAL_HEADERS: readonly string[] = [
  'authorization',
  'cookie',
  'proxy-authorization',
];

/**
 * Whom credentials sent to `url` are meant for: host and port, the port of http and https both
 * counting as "default" so that upgrading `http://host/` to `https://host/` keeps them. An
 * unparseable URL is its own site.
 */
export function credentialSite(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port}`;
  } catch {
    return `unparsed:${url}`;
  }
}

export function checkPolicy(policy: unknown): Policy {
  if (!(POLICIES as readonly unknown[]).includes(policy))
    throw new TypeError(
      `@httpsify/fetch: unknown policy ${JSON.stringify(policy)}; expected one of ${POLICIES.join(', ')}`,
    );
  return policy as Policy;
}

/** `url` over https: same host, path and query; a port is kept unless it was http's own. */
export function httpsOf(url: URL): string {
  const secure = new URL(url.href);
  secure.protocol = 'https:';
  return secure.href;
}

/** What to request for `url` under `policy`. Only http: URLs ever change. */
export function planRequest(url: string, policy: Policy, rewriter: Rewriter): RequestPlan {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, fallback: null, reason: null };
  }
  if (parsed.protocol !== 'http:') return { url, fallback: null, reason: null };
  const rewritten = rewriter.rewrite(parsed.href);
  if (rewritten !== null && /^https:/i.test(rewritten))
    return { url: rewritten, fallback: null, reason: 'ruleset' };
  // A ruleset may move a URL to another http:// URL; only `prefer` and `force` go further.
  const base = rewritten === null ? parsed : new URL(rewritten);
  if (policy === 'rules')
    return rewritten === null
      ? { url, fallback: null, reason: null }
      : { url: rewritten, fallback: null, reason: 'ruleset' };
  if (policy === 'force') return { url: httpsOf(base), fallback: null, reason: 'force' };
  return { url: httpsOf(base), fallback: base.href, reason: 'prefer' };
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'EPROTO',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_HEADERS_TIMEOUT',
  'HTTPSIFY_TRY_TIMEOUT',
]);

/**
 * True when an error means "HTTPS could not be reached" (refused, reset, TLS or certificate
 * failure, timeout before an answer), the only case where `prefer` falls back to http://.
 * A caller's abort is never one.
 */
export function isConnectionFailure(err: unknown): boolean {
  for (
    let e = err as
        { code?: unknown; name?: unknown; message?: unknown; cause?: unknown } | undefined,
      depth = 0;
    e !== undefined && e !== null && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (e.name === 'AbortError' || e.code === 'UND_ERR_ABORTED' || e.code === 'ABORT_ERR')
      return false;
    const code = typeof e.code === 'string' ? e.code : '';
    if (CONNECTION_CODES.has(code)) return true;
    if (/^ERR_(SSL|TLS)_|CERT|SELF_SIGNED|UNABLE_TO_|HOSTNAME|DEPTH_ZERO/.test(code)) return true;
    if (
      typeof e.message === 'string' &&
      /SSL|TLS|certificate|wrong version number/i.test(e.message) &&
      code === ''
    )
      return true;
  }
  return false;
}
