import {
  RequestFailure,
  requestOnce,
  type FailureKind,
  type RequestSettings,
} from './single-request.js';

/** The old checker's depth limit: up to this many redirects are followed per test URL. */
export const MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface Hop {
  url: string;
  status: number;
}

export type ChainFailureKind =
  FailureKind | 'redirect-loop' | 'too-many-redirects' | 'bad-redirect';

/** Where a chain of requests ended: a final response, or a failure at the last URL tried. */
export interface ChainOutcome {
  /** Every response received, in order (redirects included). */
  hops: Hop[];
  finalUrl: string;
  /** The final response's status; null when the chain failed. */
  status: number | null;
  contentType: string;
  body: string;
  failure?: { kind: ChainFailureKind; message: string };
}

/**
 * GETs `start` and follows redirects by hand. `rewriteLocation` sees every absolute Location
 * before it is requested (the browser's rulesets apply to redirects too); the same URL twice
 * is a loop, which the old checker claimed to detect but never did.
 */
export async function followRedirects(
  start: string,
  settings: RequestSettings,
  rewriteLocation: (url: string) => string = (u) => u,
): Promise<ChainOutcome> {
  const hops: Hop[] = [];
  const seen = new Set<string>();
  let current = start;
  const failed = (kind: ChainFailureKind, message: string): ChainOutcome => ({
    hops,
    finalUrl: current,
    status: null,
    contentType: '',
    body: '',
    failure: { kind, message },
  });
  for (;;) {
    let url: URL;
    try {
      url = new URL(current);
    } catch {
      return failed('bad-redirect', `not a valid URL: ${current}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return failed('bad-redirect', `redirect to a non-HTTP URL: ${current}`);
    seen.add(current);
    let response;
    try {
      response = await requestOnce(url, settings);
    } catch (err) {
      if (err instanceof RequestFailure) return failed(err.kind, `${err.message} at ${current}`);
      throw err;
    }
    hops.push({ url: current, status: response.status });
    if (!REDIRECT_STATUSES.has(response.status)) {
      return {
        hops,
        finalUrl: current,
        status: response.status,
        contentType: response.contentType,
        body: response.body,
      };
    }
    if (response.location === undefined || response.location === '')
      return failed('bad-redirect', `${response.status} without a Location header at ${current}`);
    let next: string;
    try {
      next = rewriteLocation(new URL(response.location, current).href);
    } catch {
      return failed(
        'bad-redirect',
        `unusable Location ${JSON.stringify(response.location)} at ${current}`,
      );
    }
    if (seen.has(next))
      return failed(
        'redirect-loop',
        `redirect loop: ${[...hops.map((h) => h.url), next].join(' -> ')}`,
      );
    if (hops.length > MAX_REDIRECTS)
      return failed('too-many-redirects', `more than ${MAX_REDIRECTS} redirects from ${start}`);
    current = next;
  }
}
