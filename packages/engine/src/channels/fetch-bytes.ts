import { ChannelError } from './errors.js';
import { readStreamLimited } from './gzip.js';

/**
 * How the update logic reads a URL. It must resolve with the complete body of a 200 response
 * and reject on anything else (other status, network error, a body cut short, more than
 * `maxBytes`). Injected so the CLI, the extension and tests choose their own transport.
 */
export type FetchBytes = (url: string, options: { maxBytes: number }) => Promise<Uint8Array>;

/** The WHATWG `fetch` signature, narrowed to what is used here. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/**
 * A {@link FetchBytes} on top of `fetch`. Caches are bypassed so a check always sees the
 * publisher's current `latest-timestamp`; the declared length is checked against the body so
 * a connection closed early is an error even if the transport does not report it.
 *
 * Redirects are followed by hand, and only to `https:` URLs: `fetch` would follow a 302 to
 * `http://` on its own. Where the platform hides the target of a redirect (a browser answers
 * `opaqueredirect`), it cannot be checked and is refused. A `Content-Encoding` (a static server
 * serving `.gz` files "gzip-encoded") is undone by `fetch`; the declared length then counts the
 * encoded bytes, so it is not compared, and the caller accepts either form (see update.ts).
 */
export function fetchBytesWith(
  fetchImpl: FetchLike = (url, init) => fetch(url, init),
  options: { timeoutMs?: number } = {},
): FetchBytes {
  const timeoutMs = options.timeoutMs ?? 60_000;
  return async (url, { maxBytes }) => {
    // One deadline for the whole download, redirects included: a slow drip cannot stall a check.
    const signal = AbortSignal.timeout(timeoutMs);
    let response: Response | undefined;
    let current = url;
    for (let hop = 0; ; hop++) {
      if (!current.startsWith('https:'))
        throw new ChannelError(
          'insecure-redirect',
          `${url}: redirected to ${current}; channel files are only fetched over https`,
        );
      try {
        response = await fetchImpl(current, {
          cache: 'no-store',
          redirect: 'manual',
          credentials: 'omit',
          signal,
        });
      } catch (err) {
        throw new ChannelError('fetch-failed', `${current}: ${networkMessage(err)}`, {
          cause: err,
        });
      }
      if (response.type === 'opaqueredirect') {
        throw new ChannelError(
          'insecure-redirect',
          `${current}: the server redirected and this browser does not show where to, so the redirect cannot be checked to stay on https; serve the channel without redirects`,
        );
      }
      if (!REDIRECT_STATUSES.has(response.status)) break;
      await response.body?.cancel().catch(() => undefined);
      const location = response.headers.get('location');
      if (location === null || hop >= MAX_REDIRECTS)
        throw new ChannelError(
          'fetch-failed',
          `${current}: ${location === null ? 'redirect without a Location' : `more than ${MAX_REDIRECTS} redirects`}`,
        );
      try {
        current = new URL(location, current).href;
      } catch {
        throw new ChannelError(
          'fetch-failed',
          `${current}: redirect to an invalid URL ${JSON.stringify(location)}`,
        );
      }
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new ChannelError(
        'fetch-failed',
        `${current}: server answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`,
      );
    }
    const encoding = (response.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
    const declared = encoding === 'identity' ? response.headers.get('content-length') : null;
    const declaredLength =
      declared !== null && /^[0-9]+$/.test(declared) ? Number(declared) : undefined;
    if (declaredLength !== undefined && declaredLength > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw new ChannelError(
        'too-large',
        `${current}: ${declaredLength} bytes exceed the limit of ${maxBytes}`,
      );
    }
    let body: Uint8Array;
    try {
      body = response.body
        ? await readStreamLimited(response.body, maxBytes, current)
        : new Uint8Array(0);
    } catch (err) {
      if (err instanceof ChannelError) throw err;
      throw new ChannelError(
        'fetch-failed',
        `${current}: download interrupted: ${networkMessage(err)}`,
        { cause: err },
      );
    }
    if (declaredLength !== undefined && body.byteLength !== declaredLength) {
      throw new ChannelError(
        'fetch-failed',
        `${current}: download interrupted: got ${body.byteLength} of ${declaredLength} bytes`,
      );
    }
    return body;
  };
}

/** fetch() hides the useful part ("ECONNREFUSED", "certificate has expired") in `cause`. */
function networkMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error && cause.message && cause.message !== err.message)
    return `${err.message} (${cause.message})`;
  return err.message;
}
