import {
  fetch as undiciFetch,
  FormData,
  Headers,
  Request,
  Response,
  type Dispatcher,
  type RequestInit,
} from 'undici';
import { defaultRewriter } from './default-rewriter.js';
import { snapshotOptions } from './options.js';
import {
  checkPolicy,
  CREDENTIAL_HEADERS,
  credentialSite,
  isConnectionFailure,
  planRequest,
  type Policy,
  type Rewriter,
  type UpgradeReason,
} from './policy.js';

export interface UpgradeEvent {
  from: string;
  to: string;
  reason: UpgradeReason;
  /** True when the URL came from a redirect's Location. */
  redirect: boolean;
  /** True for a `prefer` fallback: `from` is the https URL that failed, `to` the http URL sent instead. */
  fallback: boolean;
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
  /** Told about every URL that was changed, and about `prefer` fallbacks (`fallback: true`, `to` the http URL). */
  onUpgrade?: (event: UpgradeEvent) => void;
  /**
   * `prefer`: also fall back to http:// for a request that carries credentials (`Authorization`,
   * `Cookie`, `Proxy-Authorization`). Off by default: a failed HTTPS attempt then throws
   * `HttpsRequiredError` rather than send them in cleartext.
   */
  allowHttpFallbackWithCredentials?: boolean;
  /** `prefer`: also fall back to http:// for a request with a body. Off by default, as above. */
  allowHttpFallbackWithBody?: boolean;
  /** @internal the fetch that sends each hop (undici's). */
  fetch?: typeof undiciFetch;
}

/**
 * Thrown when a URL could not be fetched over HTTPS and going on over plain HTTP is not allowed:
 * always under `force`; under `prefer` for a request with credentials or a body unless the
 * matching `allowHttpFallbackWith…` option is set.
 */
export class HttpsRequiredError extends TypeError {
  constructor(
    readonly url: string,
    cause: unknown,
    why = 'policy "force" never falls back to http://',
  ) {
    super(`@httpsify/fetch: ${url} could not be fetched over HTTPS (${why})`, { cause });
    this.name = 'HttpsRequiredError';
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const BODY_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
];

function hasCredentials(headers: Headers): boolean {
  return CREDENTIAL_HEADERS.some((h) => headers.has(h));
}

function dropCredentials(headers: Headers): void {
  for (const h of CREDENTIAL_HEADERS) headers.delete(h);
}

/**
 * A `fetch` that keeps requests on HTTPS under `options.policy`. It sends each request with
 * undici's own `fetch` (pinned with this package) rather than Node's global one, so the
 * dispatcher and the fetch always come from the same undici. Redirects are followed here, one
 * hop at a time, so that every `Location` goes through the same policy (an https page that
 * redirects to http:// is upgraded too); `redirect: 'manual'` and `'error'` behave as in fetch.
 * The response's `url` is the URL actually fetched, and `redirected` is true when a redirect
 * was followed.
 *
 * Credentials (`Authorization`, `Cookie`, `Proxy-Authorization`) follow the Fetch standard's
 * rules, judged on what is actually sent: they are dropped for good once a hop goes to another
 * host or port than the request was made for (a redirect, or a ruleset that moves the URL), and
 * never sent over http:// once the request has been over https:// (an upgrade of the same
 * host to https keeps them). A `prefer` fallback to http:// with credentials or a body needs the
 * caller's explicit `allowHttpFallbackWith…` option.
 */
/** What the wrapper accepts: a URL, or a Request from undici or from Node's global fetch. */
export type FetchInput = string | URL | Request | globalThis.Request;

/** What the wrapper takes as `init`: undici's `RequestInit` (`dispatcher`…) or the global one. */
export type FetchInit = RequestInit | globalThis.RequestInit;

/**
 * The wrapper's type: assignable to the global `typeof fetch` (a drop-in for it), and taking
 * undici's own `RequestInit` too. The response is undici's, typed as the global one too: it has
 * every member of it (though not `instanceof` it), its body a Node web stream of bytes as Node's
 * own fetch gives.
 */
export type HttpsifyFetch = (
  input: FetchInput,
  init?: FetchInit,
) => Promise<Response & globalThis.Response>;

/**
 * `init` as this undici takes it. The global type's bodies are the same objects at run time
 * (Node's web streams, Blob, URLSearchParams, buffers) but one: a FormData of Node's own undici,
 * or of any other copy, is another class, which this undici would send as the text
 * "[object FormData]"; it is copied into one of ours, entry by entry. A view of shared memory,
 * which the types allow, Node's fetch refuses, and this undici would send as "0,0,…" text.
 */
function ownInit(init: FetchInit): RequestInit {
  const body: unknown = init.body;
  if (
    ArrayBuffer.isView(body) &&
    Object.prototype.toString.call(body.buffer) === '[object SharedArrayBuffer]'
  )
    throw new TypeError('@httpsify/fetch: a body over a SharedArrayBuffer is not allowed');
  if (
    body instanceof FormData ||
    Object.prototype.toString.call(body) !== '[object FormData]' ||
    typeof (body as { forEach?: unknown }).forEach !== 'function'
  )
    return init as RequestInit;
  const copy = new FormData();
  (body as { forEach(each: (value: string | Blob, name: string) => void): void }).forEach(
    (value, name) => copy.append(name, value),
  );
  return { ...(init as RequestInit), body: copy };
}

/** A Request of this package's undici, also from a Request of Node's own (bundled) undici. */
function toRequest(input: FetchInput, given: FetchInit): Request {
  const init = ownInit(given);
  // Without the signal: a Request follows it with a listener of its own that stays as long as
  // the signal lives; the wrapper reads the caller's signal itself and passes it on per try.
  if (typeof input === 'string' || input instanceof URL || input instanceof Request)
    return new Request(input, { ...init, signal: null });
  const foreign = input;
  const headers: [string, string][] = [];
  foreign.headers.forEach((value, name) => headers.push([name, value]));
  return new Request(foreign.url, {
    method: foreign.method,
    headers,
    body: foreign.body as RequestInit['body'],
    redirect: foreign.redirect,
    ...(foreign.body !== null ? { duplex: 'half' as const } : {}),
    ...init,
    signal: null,
  });
}

/** Every option createHttpsifyFetch takes (taken and checked when it is created: options.ts). */
const FETCH_OPTIONS = [
  'policy',
  'rewriter',
  'dispatcher',
  'maxRedirects',
  'preferTimeoutMs',
  'onUpgrade',
  'allowHttpFallbackWithCredentials',
  'allowHttpFallbackWithBody',
  'fetch',
] as const satisfies readonly (keyof HttpsifyFetchOptions)[];

export function createHttpsifyFetch(given: HttpsifyFetchOptions = {}): HttpsifyFetch {
  // Read once and frozen: nothing below reads the caller's object again (options.ts).
  const options = snapshotOptions<HttpsifyFetchOptions>(
    'createHttpsifyFetch',
    given,
    FETCH_OPTIONS,
  );
  // Only a left-out policy is the default one; null is refused like any other non-policy.
  const policy = checkPolicy(options.policy === undefined ? 'rules' : options.policy);
  const maxRedirects = options.maxRedirects ?? 20;
  const preferTimeoutMs = options.preferTimeoutMs ?? 10_000;
  const send = options.fetch ?? undiciFetch;
  let rewriter = options.rewriter ?? null;

  const httpsifyFetch = async (input: FetchInput, init: FetchInit = {}): Promise<Response> => {
    rewriter ??= defaultRewriter();
    const request = toRequest(input, init);
    let url = request.url;
    let method = request.method;
    const headers = new Headers(request.headers);
    // Read once: a redirect or a fallback sends the body again.
    let body: ArrayBuffer | null = request.body === null ? null : await request.arrayBuffer();
    // The caller's signal and redirect mode, whether given in `init` or in a Request.
    const signal =
      init.signal ??
      (typeof input === 'object' && !(input instanceof URL)
        ? (input.signal as AbortSignal)
        : undefined);
    const redirectMode = request.redirect;
    // Credentials belong to the host and port the caller addressed (in any scheme: our own upgrade
    // to https keeps them), and stay off plain HTTP once the request has been on HTTPS.
    const owner = credentialSite(url);
    let wasSecure = false;
    /** Drops the credentials if `target` may not have them; call before each send. */
    const guard = (target: string): void => {
      if (credentialSite(target) !== owner || (wasSecure && target.startsWith('http:')))
        dropCredentials(headers);
      if (target.startsWith('https:')) wasSecure = true;
    };
    for (let hop = 0; ; hop++) {
      const plan = planRequest(url, policy, rewriter);
      if (plan.reason !== null)
        options.onUpgrade?.({
          from: url,
          to: plan.url,
          reason: plan.reason,
          redirect: hop > 0,
          fallback: false,
        });
      const secureBefore: boolean = wasSecure;
      guard(plan.url);
      const common = {
        method,
        headers,
        body,
        redirect: 'manual' as const,
        ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
      };
      let response: Response;
      if (plan.fallback !== null) {
        try {
          response = await attemptWithDeadline(send, plan.url, common, signal, preferTimeoutMs);
        } catch (err) {
          if (!isConnectionFailure(err) || signal?.aborted === true) throw err;
          if (hasCredentials(headers) && options.allowHttpFallbackWithCredentials !== true)
            throw new HttpsRequiredError(
              plan.url,
              err,
              'the request carries credentials; allowHttpFallbackWithCredentials is not set',
            );
          if (body !== null && options.allowHttpFallbackWithBody !== true)
            throw new HttpsRequiredError(
              plan.url,
              err,
              'the request has a body; allowHttpFallbackWithBody is not set',
            );
          options.onUpgrade?.({
            from: plan.url,
            to: plan.fallback,
            reason: 'prefer',
            redirect: hop > 0,
            fallback: true,
          });
          // This hop's https attempt never got an answer: judge the fallback as if it had not been made.
          wasSecure = secureBefore;
          guard(plan.fallback);
          response = await send(plan.fallback, {
            ...common,
            ...(signal !== undefined ? { signal } : {}),
          });
        }
      } else {
        try {
          response = await send(plan.url, {
            ...common,
            ...(signal !== undefined ? { signal } : {}),
          });
        } catch (err) {
          if (policy === 'force' && plan.reason !== null && isConnectionFailure(err))
            throw new HttpsRequiredError(plan.url, err);
          throw err;
        }
      }
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || location === null || redirectMode === 'manual')
        return hop > 0 ? markRedirected(response) : response;
      if (redirectMode === 'error') {
        await response.body?.cancel();
        throw new TypeError(`@httpsify/fetch: ${response.url} redirected, and redirect is "error"`);
      }
      if (hop >= maxRedirects) {
        await response.body?.cancel();
        throw new TypeError(
          `@httpsify/fetch: more than ${maxRedirects} redirects from ${request.url}`,
        );
      }
      let next: string;
      try {
        next = new URL(location, response.url).href;
      } catch {
        await response.body?.cancel();
        throw new TypeError(
          `@httpsify/fetch: unusable Location ${JSON.stringify(location)} from ${response.url}`,
        );
      }
      await response.body?.cancel();
      // As fetch does: 303, and 301/302 after a POST, become a GET without a body.
      if (
        response.status === 303
          ? method !== 'HEAD'
          : (response.status === 301 || response.status === 302) && method === 'POST'
      ) {
        method = 'GET';
        body = null;
        for (const h of BODY_HEADERS) headers.delete(h);
      }
      url = next;
    }
  };
  // undici's Response has every member of the global one, but the two sets of declarations (the
  // DOM's or @types/node's, and undici's) type their streams in ways TypeScript cannot match.
  return httpsifyFetch as HttpsifyFetch;
}

/** `response` with `redirected` true, as fetch reports a response reached through redirects. */
function markRedirected(response: Response): Response {
  Object.defineProperty(response, 'redirected', { value: true });
  return response;
}

/**
 * One attempt whose answer must start within `ms`; the caller's signal still aborts it. The
 * deadline ends once headers arrive, so a long download is not cut short.
 */
async function attemptWithDeadline(
  send: typeof undiciFetch,
  url: string,
  init: RequestInit,
  signal: AbortSignal | undefined,
  ms: number,
): Promise<Response> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal?.reason);
  if (signal?.aborted === true) controller.abort(signal.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  // The caller's abort must reach the body until it is read; then our listener goes (one per
  // try, never removed, piled up on a long-lived signal such as a process-wide shutdown).
  const release = (): void => signal?.removeEventListener('abort', onAbort);
  const timer = setTimeout(
    () =>
      controller.abort(
        Object.assign(new Error(`no answer within ${ms} ms`), { code: 'HTTPSIFY_TRY_TIMEOUT' }),
      ),
    ms,
  );
  let response: Response;
  try {
    response = await send(url, { ...init, signal: controller.signal });
  } catch (err) {
    release();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  if (signal === undefined) return response;
  if (response.body === null) {
    release();
    return response;
  }
  return releasingWhenRead(response, release);
}

/** The same response, calling `release` once its body is read to the end, fails or is cancelled. */
function releasingWhenRead(response: Response, release: () => void): Response {
  const source = (response.body as ReadableStream<Uint8Array>).getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(out) {
      try {
        const { done, value } = await source.read();
        if (done) {
          release();
          out.close();
        } else out.enqueue(value);
      } catch (err) {
        release();
        out.error(err);
      }
    },
    cancel(reason) {
      release();
      return source.cancel(reason);
    },
  });
  const init = {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  };
  // Node's web stream and undici's body types are one class at run time, two in the typings.
  const wrapped = new Response(body as unknown as ConstructorParameters<typeof Response>[0], init);
  Object.defineProperty(wrapped, 'url', { value: response.url });
  return wrapped;
}
