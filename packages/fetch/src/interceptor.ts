import type { Dispatcher } from 'undici';
import { defaultRewriter } from './default-rewriter.js';
import { checkPolicy, isConnectionFailure, planRequest, type Policy, type Rewriter, type UpgradeReason } from './policy.js';

export interface HttpsifyInterceptorOptions {
  /** Default `rules`. */
  policy?: Policy;
  /** The rulesets; default: the bundled rulesets. */
  rewriter?: Rewriter;
  onUpgrade?: (event: { from: string; to: string; reason: UpgradeReason }) => void;
}

type Handler = Dispatcher.DispatchHandler;

/**
 * An undici interceptor (`new Agent().compose(httpsifyInterceptor())`) that sends every request
 * to the URL the policy chooses. Redirects need nothing more: fetch dispatches each hop, and
 * each passes through here. The caller still sees the URL it asked for (`response.url`), since
 * the interceptor works below fetch. With `prefer`, a request that fails before any answer
 * (refused, TLS failure) is sent again to the http:// URL with the same handler; a request
 * body that is a stream cannot be sent twice, so such requests get no fallback.
 */
export function httpsifyInterceptor(options: HttpsifyInterceptorOptions = {}): Dispatcher.DispatcherComposeInterceptor {
  const policy = checkPolicy(options.policy ?? 'rules');
  let rewriter = options.rewriter ?? null;
  return (dispatch) => (opts, handler) => {
    if (opts.origin === undefined) return dispatch(opts, handler);
    rewriter ??= defaultRewriter();
    const origin = String(opts.origin).replace(/\/$/, '');
    const url = origin + opts.path;
    const plan = planRequest(url, policy, rewriter);
    if (plan.reason === null) return dispatch(opts, handler);
    options.onUpgrade?.({ from: url, to: plan.url, reason: plan.reason });
    const target = new URL(plan.url);
    const upgraded = { ...opts, origin: target.origin, path: target.pathname + target.search };
    const replayable = opts.body === undefined || opts.body === null || typeof opts.body === 'string' || opts.body instanceof Uint8Array;
    if (plan.fallback === null || !replayable) return dispatch(upgraded, handler);
    const fallbackUrl = new URL(plan.fallback);
    const fallback = { ...opts, origin: fallbackUrl.origin, path: fallbackUrl.pathname + fallbackUrl.search };
    return dispatch(
      upgraded,
      withFallback(handler, () => {
        options.onUpgrade?.({ from: plan.url, to: plan.fallback as string, reason: 'prefer' });
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
  const started = new Set<PropertyKey>(['onResponseStart', 'onHeaders', 'onRequestUpgrade', 'onUpgrade']);
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
