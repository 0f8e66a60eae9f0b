import { fetch as undiciFetch, Headers, Request, type Dispatcher, type RequestInit, type Response } from 'undici';
import { defaultRewriter } from './default-rewriter.js';
import { checkPolicy, isConnectionFailure, planRequest, type Policy, type Rewriter, type UpgradeReason } from './policy.js';

export interface UpgradeEvent {
  from: string;
  to: string;
  reason: UpgradeReason;
  /** True when the URL came from a redirect's Location. */
  redirect: boolean;
}

export interface HttpsifyFetchOptions {
  /** Default `rules`. */
  policy?: Policy;
  /** The rulesets (an `Engine` from `@httpsify/engine`); default: the bundled rulesets. */
  rewriter?: Rewriter;
  /** Passed to every request (proxies, TLS options, your own interceptors). */
  dispatcher?: Dispatcher;
  /** Redirects followed per call (fetch's own limit is 20). */
  maxRedirects?: number;
  /** `prefer`: how long the HTTPS attempt may take to answer before falling back. Default 10 s. */
  preferTimeoutMs?: number;
  /** Told about every URL that was changed, and about `prefer` fallbacks (reason `prefer`, `to` the http URL). */
  onUpgrade?: (event: UpgradeEvent) => void;
  /** @internal the fetch that sends each hop (undici's). */
  fetch?: typeof undiciFetch;
}

/** Thrown by `force` when a URL cannot be fetched over HTTPS. */
export class HttpsRequiredError extends TypeError {
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(`@httpsify/fetch: ${url} could not be fetched over HTTPS (policy "force" never falls back to http://)`, { cause });
    this.name = 'HttpsRequiredError';
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

/** host:port ignoring the scheme: an upgrade to https is not a change of site. */
function site(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port === '' ? '' : u.port}`;
}

/**
 * A `fetch` that keeps requests on HTTPS under `options.policy`. It sends each request with
 * undici's own `fetch` (pinned with this package) rather than Node's global one, so the
 * dispatcher and the fetch always come from the same undici. Redirects are followed here, one
 * hop at a time, so that every `Location` goes through the same policy (an https page that
 * redirects to http:// is upgraded too); `redirect: 'manual'` and `'error'` behave as in fetch.
 * The response's `url` is the URL actually fetched; `redirected` is always false.
 */
/** What the wrapper accepts: a URL, or a Request from undici or from Node's global fetch. */
export type FetchInput = string | URL | Request | globalThis.Request;

/** A Request of this package's undici, also from a Request of Node's own (bundled) undici. */
function toRequest(input: FetchInput, init: RequestInit): Request {
  if (typeof input === 'string' || input instanceof URL || input instanceof Request) return new Request(input, init);
  const foreign = input;
  const headers: [string, string][] = [];
  foreign.headers.forEach((value, name) => headers.push([name, value]));
  return new Request(foreign.url, {
    method: foreign.method,
    headers,
    body: foreign.body as RequestInit['body'],
    redirect: foreign.redirect,
    signal: foreign.signal as RequestInit['signal'],
    ...(foreign.body !== null ? { duplex: 'half' as const } : {}),
    ...init,
  });
}

export function createHttpsifyFetch(options: HttpsifyFetchOptions = {}): (input: FetchInput, init?: RequestInit) => Promise<Response> {
  const policy = checkPolicy(options.policy ?? 'rules');
  const maxRedirects = options.maxRedirects ?? 20;
  const preferTimeoutMs = options.preferTimeoutMs ?? 10_000;
  const send = options.fetch ?? undiciFetch;
  let rewriter = options.rewriter ?? null;

  return async (input, init = {}) => {
    rewriter ??= defaultRewriter();
    const request = toRequest(input, init);
    let url = request.url;
    let method = request.method;
    const headers = new Headers(request.headers);
    // Read once: a redirect or a fallback sends the body again.
    let body: ArrayBuffer | null = request.body === null ? null : await request.arrayBuffer();
    // The caller's signal and redirect mode, whether given in `init` or in a Request.
    const signal = init.signal ?? (typeof input === 'object' && !(input instanceof URL) ? (input.signal as AbortSignal) : undefined);
    const redirectMode = request.redirect;
    for (let hop = 0; ; hop++) {
      const plan = planRequest(url, policy, rewriter);
      if (plan.reason !== null) options.onUpgrade?.({ from: url, to: plan.url, reason: plan.reason, redirect: hop > 0 });
      const common = { method, headers, body, redirect: 'manual' as const, ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}) };
      let response: Response;
      if (plan.fallback !== null) {
        try {
          response = await attemptWithDeadline(send, plan.url, common, signal, preferTimeoutMs);
        } catch (err) {
          if (!isConnectionFailure(err) || signal?.aborted === true) throw err;
          options.onUpgrade?.({ from: plan.url, to: plan.fallback, reason: 'prefer', redirect: hop > 0 });
          response = await send(plan.fallback, { ...common, ...(signal !== undefined ? { signal } : {}) });
        }
      } else {
        try {
          response = await send(plan.url, { ...common, ...(signal !== undefined ? { signal } : {}) });
        } catch (err) {
          if (policy === 'force' && plan.reason !== null && isConnectionFailure(err)) throw new HttpsRequiredError(plan.url, err);
          throw err;
        }
      }
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || location === null || redirectMode === 'manual') return response;
      if (redirectMode === 'error') {
        await response.body?.cancel();
        throw new TypeError(`@httpsify/fetch: ${response.url} redirected, and redirect is "error"`);
      }
      if (hop >= maxRedirects) {
        await response.body?.cancel();
        throw new TypeError(`@httpsify/fetch: more than ${maxRedirects} redirects from ${request.url}`);
      }
      let next: string;
      try {
        next = new URL(location, response.url).href;
      } catch {
        await response.body?.cancel();
        throw new TypeError(`@httpsify/fetch: unusable Location ${JSON.stringify(location)} from ${response.url}`);
      }
      await response.body?.cancel();
      // As fetch does: 303, and 301/302 after a POST, become a GET without a body.
      if (response.status === 303 ? method !== 'HEAD' : (response.status === 301 || response.status === 302) && method === 'POST') {
        method = 'GET';
        body = null;
        for (const h of BODY_HEADERS) headers.delete(h);
      }
      if (site(next) !== site(response.url)) for (const h of CREDENTIAL_HEADERS) headers.delete(h);
      url = next;
    }
  };
}

/**
 * One attempt whose answer must start within `ms`; the caller's signal still aborts it. The
 * deadline ends once headers arrive, so a long download is not cut short.
 */
async function attemptWithDeadline(send: typeof undiciFetch, url: string, init: RequestInit, signal: AbortSignal | undefined, ms: number): Promise<Response> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal?.reason);
  if (signal?.aborted === true) controller.abort(signal.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'HTTPSIFY_TRY_TIMEOUT' })), ms);
  try {
    return await send(url, { ...init, signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}
