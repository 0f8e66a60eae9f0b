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

/**
 * A {@link FetchBytes} on top of `fetch`. Caches are bypassed so a check always sees the
 * publisher's current `latest-timestamp`; the declared length is checked against the body so
 * a connection closed early is an error even if the transport does not report it.
 */
export function fetchBytesWith(fetchImpl: FetchLike = (url, init) => fetch(url, init), options: { timeoutMs?: number } = {}): FetchBytes {
  const timeoutMs = options.timeoutMs ?? 60_000;
  return async (url, { maxBytes }) => {
    const signal = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await fetchImpl(url, { cache: 'no-store', redirect: 'follow', credentials: 'omit', signal });
    } catch (err) {
      throw new ChannelError('fetch-failed', `${url}: ${networkMessage(err)}`, { cause: err });
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new ChannelError('fetch-failed', `${url}: server answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
    }
    const declared = response.headers.get('content-length');
    const declaredLength = declared !== null && /^[0-9]+$/.test(declared) ? Number(declared) : undefined;
    if (declaredLength !== undefined && declaredLength > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw new ChannelError('too-large', `${url}: ${declaredLength} bytes exceed the limit of ${maxBytes}`);
    }
    let body: Uint8Array;
    try {
      body = response.body ? await readStreamLimited(response.body, maxBytes, url) : new Uint8Array(0);
    } catch (err) {
      if (err instanceof ChannelError) throw err;
      throw new ChannelError('fetch-failed', `${url}: download interrupted: ${networkMessage(err)}`, { cause: err });
    }
    if (declaredLength !== undefined && body.byteLength !== declaredLength) {
      throw new ChannelError('fetch-failed', `${url}: download interrupted: got ${body.byteLength} of ${declaredLength} bytes`);
    }
    return body;
  };
}

/** fetch() hides the useful part ("ECONNREFUSED", "certificate has expired") in `cause`. */
function networkMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error && cause.message && cause.message !== err.message) return `${err.message} (${cause.message})`;
  return err.message;
}
