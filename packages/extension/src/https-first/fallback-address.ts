/**
 * The fallback page's address: written by the background when an upgrade failed, read by the
 * page and by the background when a page's address comes back (tickets, the popup's status).
 * Both sides are here, so a parameter cannot be renamed on one side only. Any site can open the
 * page with any query: the reader checks every parameter and never throws.
 */

/** The query parameter that carries the background's secret (page-tickets.ts). */
export const TICKET_PARAM = 'ticket';

/** One attempt of the fallback, as the page lists it. */
export interface Attempt {
  /** What was asked: `https://host/` (probes carry no path). */
  url: string;
  /** `ok`, `HTTP 404`, `redirect`, or why it failed (a network error name, `timeout`). */
  result: string;
}

/** At most this many attempts are read back (the fallback tries two: the host and its twin). */
export const MAX_ATTEMPTS = 10;

export interface FallbackExtras {
  tried?: Attempt[];
  /** The origin-only HTTP probe's result (`ok`, `not tried`, or why it failed). */
  http?: string;
  /** The www. twin that answered over HTTPS: offered as a link, never followed for the user. */
  twin?: string | null;
  /** History entries "Go back" skips: this page, and the browser's error page of the attempt. */
  back?: number;
  ticket?: string;
}

/** The page's parameters as read: each one checked, absent or malformed ones null or defaults. */
export interface FallbackPageParams {
  /** The http:// address that failed to upgrade, as written (the page checks it is a web URL). */
  url: string | null;
  reason: string;
  ticket: string | null;
  tried: Attempt[];
  http: string | null;
  twin: string | null;
  /** 1 or 2. */
  back: number;
}

/** The fallback page's address for a failed upgrade (URL-encoded: `&` and `#` survive). */
export function fallbackPageUrl(
  base: string,
  httpUrl: string,
  reason: string,
  extra: FallbackExtras = {},
): string {
  const q = new URLSearchParams({ url: httpUrl, reason });
  if (extra.ticket !== undefined) q.set(TICKET_PARAM, extra.ticket);
  if (extra.tried !== undefined) q.set('tried', JSON.stringify(extra.tried));
  if (extra.http !== undefined) q.set('http', extra.http);
  if (extra.twin !== undefined && extra.twin !== null) q.set('twin', extra.twin);
  if (extra.back !== undefined) q.set('back', String(extra.back));
  return `${base}?${q.toString()}`;
}

/** Reads a fallback page's query (`location.search`, or a whole address's `searchParams`). */
export function readFallbackPage(query: string | URLSearchParams): FallbackPageParams {
  const q = typeof query === 'string' ? new URLSearchParams(query) : query;
  const back = Number(q.get('back') ?? '1');
  return {
    url: q.get('url'),
    reason: q.get('reason') ?? '',
    ticket: q.get(TICKET_PARAM),
    tried: attempts(q.get('tried')),
    http: q.get('http'),
    twin: q.get('twin'),
    back: Number.isInteger(back) && back >= 1 && back <= 2 ? back : 1,
  };
}

/** The address written in a fallback page's address (`url=`), or null when it is not one. */
export function fallbackTarget(pageUrl: string): string | null {
  try {
    return readFallbackPage(new URL(pageUrl).searchParams).url;
  } catch {
    return null;
  }
}

function attempts(raw: string | null): Attempt[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw ?? '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const out: Attempt[] = [];
  for (const item of parsed.slice(0, MAX_ATTEMPTS)) {
    const { url, result } = (item ?? {}) as { url?: unknown; result?: unknown };
    if (typeof url === 'string' && typeof result === 'string') out.push({ url, result });
  }
  return out;
}
