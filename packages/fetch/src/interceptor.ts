import type { Dispatcher } from 'undici';
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

/** What the interceptor tells `onUpgrade`; it sees one hop at a time, so it cannot tell redirects apart. */
export interface InterceptorUpgradeEvent {
  from: string;
  to: string;
  reason: UpgradeReason;
  /** True for a `prefer` fallback: `from` is the https URL that failed, `to` the http URL sent instead. */
  fallback: boolean;
}

export interface HttpsifyInterceptorOptions {
  /** Default `rules`. */
  policy?: Policy;
  /** The rulesets; default: the bundled rulesets. */
  rewriter?: Rewriter;
  onUpgrade?: (event: InterceptorUpgradeEvent) => void;
  /** `prefer`: also fall back to http:// for a request carrying credentials. Off by default. */
  allowHttpFallbackWithCredentials?: boolean;
  /** `prefer`: also fall back to http:// for a request with a (string or bytes) body. Off by default. */
  allowHttpFallbackWithBody?: boolean;
}

type Handler = Dispatcher.DispatchHandler;
type DispatchHeaders = Dispatcher.DispatchOptions['headers'];

const CREDENTIALS = new Set(CREDENTIAL_HEADERS);

/** The headers as name/value pairs, whichever of undici's shapes they come in. */
function headerPairs(headers: DispatchHeaders): [string, unknown][] {
  if (headers === undefined || headers === null) return [];
  if (Array.isArray(headers)) {
    const pairs: [string, unknown][] = [];
    for (let i = 0; i + 1 < headers.length; i += 2)
      pairs.push([String(headers[i]), headers[i + 1]]);
    return pairs;
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    return [...(headers as Iterable<[string, unknown]>)].map(([k, v]) => [String(k), v]);
  }
  return Object.entries(headers as Record<string, unknown>);
}

function carriesCredentials(headers: DispatchHeaders): boolean {
  return headerPairs(headers).some(([name]) => CREDENTIALS.has(name.toLowerCase()));
}

/** `headers` without credentials, as a plain object (a shape every dispatcher accepts). */
function withoutCredentials(headers: DispatchHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of headerPairs(headers)) {
    if (CREDENTIALS.has(name.toLowerCase()) || value === undefined || value === null) continue;
    const v = Array.isArray(value) ? value.map(String) : String(value);
    const prev = out[name];
    out[name] =
      prev === undefined
        ? v
        : [...(Array.isArray(prev) ? prev : [prev]), ...(Array.isArray(v) ? v : [v])];
  }
  return out;
}

/** Every option httpsifyInterceptor takes (taken and checked when it is created: options.ts). */
const INTERCEPTOR_OPTIONS = [
  'policy',
  'rewriter',
  'onUpgrade',
  'allowHttpFallbackWithCredentials',
  'allowHttpFallbackWithBody',
] as const satisfies readonly (keyof HttpsifyInterceptorOptions)[];

/**
 * An undici interceptor (`new Agent().compose(httpsifyInterceptor())`) that sends every request
 * to the URL the policy chooses. Redirects need nothing more: fetch dispatches each hop, and
 * each passes through here. The caller still sees the URL it asked for (`response.url`), since
 * the interceptor works below fetch. With `prefer`, a request that fails before any answer
 * (refused, TLS failure) is sent again to the http:// URL with the same handler; a request
 * body that is a stream cannot be sent twice, so such requests get no fallback, and one with
 * credentials or a body gets none unless the matching `allowHttpFallbackWith…` option is set.
 * When a ruleset moves a request to another host or port, its credentials are not sent there
 * (fetch itself drops them on a cross-origin redirect).
 */
export function httpsifyInterceptor(
  given: HttpsifyInterceptorOptions = {},
): Dispatcher.DispatcherComposeInterceptor {
  // Read once and frozen: nothing below reads the caller's object again (options.ts).
  const options = snapshotOptions<HttpsifyInterceptorOptions>(
    'httpsifyInterceptor',
    given,
    INTERCEPTOR_OPTIONS,
  );
  const policy = checkPolicy(options.policy === undefined ? 'rules' : options.policy);
  let rewriter = options.rewriter ?? null;
  return (dispatch) => (opts, handler) => {
    if (opts.origin === undefined) return dispatch(opts, handler);
    rewriter ??= defaultRewriter();
    const origin = String(opts.origin).replace(/\/$/, '');
    const url = origin + opts.path;
    const plan = planRequest(url, policy, rewriter);
    if (plan.reason === null) return dispatch(opts, handler);
    options.onUpgrade?.({ from: url, to: plan.url, reason: plan.reason, fallback: false });
    const owner = credentialSite(url);
    /** `opts` sent to `to`, without credentials when `to` is another host or port than asked for. */
    const toward = (to: string): Dispatcher.DispatchOptions => {
      const target = new URL(to);
      const moved = { ...opts, origin: target.origin, path: target.pathname + target.search };
      return credentialSite(to) === owner
        ? moved
        : { ...moved, headers: withoutCredentials(opts.headers) };
    };
    const upgraded = toward(plan.url);
    const hasBody = opts.body !== undefined && opts.body !== null;
    const replayable = !hasBody || typeof opts.body === 'string' || opts.body instanceof Uint8Array;
    const fallbackAllowed =
      replayable &&
      (!hasBody || options.allowHttpFallbackWithBody === true) &&
      (!carriesCredentials(opts.headers) || options.allowHttpFallbackWithCredentials === true);
    if (plan.fallback === null || !fallbackAllowed) return dispatch(upgraded, handler);
    const fallback = toward(plan.fallback);
    return dispatch(
      upgraded,
      withFallback(handler, () => {
        options.onUpgrade?.({
          from: plan.url,
          to: plan.fallback as string,
          reason: 'prefer',
          fallback: true,
        });
        dispatch(fallback, handler);
      }),
    );
  };
}

/**
 * `handler` as it is, except that an error before any response (in either handler API, the
 * current or the legacy one) calls `retry` once instead of reaching it. A Proxy keeps whichever
 * API the handler implements, so undici adapts it as it would the handler itself.
 */
function withFallback(handler: Handler, retry: () => void): Handler {
  let answered = false;
  let retried = false;
  const started = new Set<PropertyKey>([
    'onResponseStart',
    'onHeaders',
    'onRequestUpgrade',
    'onUpgrade',
  ]);
  const failed = new Set<PropertyKey>(['onResponseError', 'onError']);
  return new Proxy(handler, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (started.has(prop)) {
        return (...args: unknown[]) => {
          answered = true;
          return fn.apply(target, args);
        };
      }
      if (failed.has(prop)) {
        return (...args: unknown[]) => {
          const err = args[args.length - 1];
          if (!answered && !retried && isConnectionFailure(err)) {
            retried = true;
            retry();
            return undefined;
          }
          return fn.apply(target, args);
        };
      }
      return fn.bind(target);
    },
  });
}
