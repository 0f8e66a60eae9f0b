import {
  request as httpRequest,
  type Agent as HttpAgent,
  type ClientRequest,
  type IncomingMessage,
} from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import {
  guardSocket,
  policyLookup,
  refusedUrl,
  type OutboundPolicy,
} from '../net/outbound-policy.js';
import type { LookupFunction } from './resolve-option.js';

/** How one request is made: name resolution, extra trust, time limit. */
export interface RequestSettings {
  lookup: LookupFunction;
  /** Which addresses may be connected to (net/outbound-policy.ts); every request obeys it. */
  policy: OutboundPolicy;
  /** Trusted CA certificates (PEM) for https; undefined keeps Node's defaults. */
  ca: string[] | undefined;
  timeoutMs: number;
  /** Bodies are cut off here; page structure only needs the start of a page. */
  maxBodyBytes: number;
  /** Connection reuse (keep-alive agents); without them every request has its own connection. */
  agents?: { http: HttpAgent; https: HttpsAgent };
  /** Waits until a request to `url` may start (politeness); resolves to "the request ended". */
  gate?: (url: URL) => Promise<() => void>;
  userAgent?: string;
}

export interface RawResponse {
  status: number;
  location: string | undefined;
  contentType: string;
  body: string;
}

/** Why a request produced no response, in the terms the report uses. */
export type FailureKind = 'dns' | 'connect' | 'tls' | 'timeout' | 'protocol' | 'not-public';

export class RequestFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    /** The failure was a reset of a reused keep-alive connection: worth one fresh try. */
    readonly staleConnection = false,
  ) {
    super(message);
  }
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'ENODATA', 'EAI_FAIL']);
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
]);

function classify(err: NodeJS.ErrnoException): RequestFailure {
  if (err instanceof RequestFailure) return err;
  const code = err.code ?? '';
  if (code === 'ERR_HTTPSIFY_NOT_PUBLIC') return new RequestFailure('not-public', err.message);
  if (DNS_CODES.has(code)) return new RequestFailure('dns', `cannot resolve host (${code})`);
  if (CONNECT_CODES.has(code)) return new RequestFailure('connect', `connection failed (${code})`);
  // TLS errors come as ERR_SSL_*, ERR_TLS_*, or certificate codes such as CERT_HAS_EXPIRED.
  if (
    /^ERR_(SSL|TLS)_|CERT|SELF_SIGNED|UNABLE_TO_|HOSTNAME/.test(code) ||
    /SSL|TLS|certificate/i.test(err.message)
  ) {
    return new RequestFailure('tls', `TLS failure (${code !== '' ? code : err.message})`);
  }
  return new RequestFailure('protocol', code !== '' ? `${code}: ${err.message}` : err.message);
}

function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return res.pipe(createGunzip());
  if (encoding === 'deflate') return res.pipe(createInflate());
  if (encoding === 'br') return res.pipe(createBrotliDecompress());
  return res;
}

/**
 * One GET without following redirects, under the outbound policy. The whole exchange (DNS,
 * connect, TLS, headers, body) shares one deadline, counted from when the request gets its
 * connection (time waiting in our own politeness gate and connection pool is not the server's);
 * a drip-fed body cannot hold a worker forever. A reset of a reused keep-alive connection (the
 * server closed it as we sent) is tried once more on a fresh one.
 */
export async function requestOnce(url: URL, settings: RequestSettings): Promise<RawResponse> {
  const refused = refusedUrl(url, settings.policy);
  if (refused !== null) throw classify(refused as NodeJS.ErrnoException);
  const release = settings.gate === undefined ? null : await settings.gate(url);
  try {
    try {
      return await requestNow(url, settings);
    } catch (err) {
      if (!(err instanceof RequestFailure) || !err.staleConnection) throw err;
      // The server closed its idle connections: the others kept for it are stale too.
      dropIdleConnections(url, settings);
      return await requestNow(url, settings);
    }
  } finally {
    release?.();
  }
}

/** Closes the idle keep-alive connections kept for `url`'s host, so the next try opens a new one. */
function dropIdleConnections(url: URL, settings: RequestSettings): void {
  const agent =
    settings.agents === undefined
      ? undefined
      : url.protocol === 'https:'
        ? settings.agents.https
        : settings.agents.http;
  if (agent === undefined) return;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  for (const [name, sockets] of Object.entries(agent.freeSockets)) {
    if (name.startsWith(`${host}:`)) for (const socket of [...(sockets ?? [])]) socket.destroy();
  }
}

/** Longest wait for a connection from our own pool before the request counts as failed. */
const queueLimitMs = (timeoutMs: number): number => 3 * timeoutMs + 30_000;

function requestNow(url: URL, settings: RequestSettings): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    const secure = url.protocol === 'https:';
    // Resolution runs inside the deadline; one still unanswered when it passes is a name that
    // does not resolve (as the resolver's own failure is, however long it took).
    let resolving = false;
    const policed = policyLookup(settings.lookup, settings.policy);
    const lookup: LookupFunction = (hostname, opts, callback) => {
      resolving = true;
      policed(hostname, opts, (err, address, family) => {
        resolving = false;
        callback(err, address, family);
      });
    };
    const options = {
      method: 'GET',
      lookup: lookup as never,
      headers: {
        'user-agent': settings.userAgent ?? 'httpsify-fetch-test/0.1',
        accept: 'text/html,*/*;q=0.8',
        'accept-encoding': 'gzip, deflate, br',
      },
      agent:
        settings.agents === undefined
          ? (false as const)
          : secure
            ? settings.agents.https
            : settings.agents.http,
      ...(secure && settings.ca !== undefined ? { ca: settings.ca } : {}),
    };
    let settled = false;
    // Declared before the request exists: errors may surface while it is being created.
    // eslint-disable-next-line prefer-const -- assigned once, but after the closures that read it
    let req: ClientRequest | undefined;
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: NodeJS.ErrnoException): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(queued);
      const reused = req?.reusedSocket === true;
      req?.destroy();
      const failure = classify(err);
      const stale = reused && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      reject(stale ? new RequestFailure(failure.kind, failure.message, true) : failure);
    };
    const queued = setTimeout(
      () =>
        fail(
          new RequestFailure(
            'timeout',
            `no connection became free within ${queueLimitMs(settings.timeoutMs)} ms`,
          ),
        ),
      queueLimitMs(settings.timeoutMs),
    );
    const startDeadline = (): void => {
      clearTimeout(queued);
      timer = setTimeout(() => {
        if (resolving)
          fail(
            new RequestFailure(
              'dns',
              `cannot resolve host (no answer within ${settings.timeoutMs} ms)`,
            ),
          );
        else
          fail(
            new RequestFailure('timeout', `no complete response within ${settings.timeoutMs} ms`),
          );
      }, settings.timeoutMs);
    };
    req = (secure ? httpsRequest : httpRequest)(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      // A body read to its end leaves the connection reusable by a keep-alive agent.
      const finish = (complete = false): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (!complete || settings.agents === undefined) req?.destroy();
        const location = res.headers.location;
        resolve({
          status: res.statusCode ?? 0,
          location,
          contentType: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks).toString('utf8'),
        });
      };
      const body = decoded(res);
      body.on('data', (chunk: Buffer) => {
        if (size >= settings.maxBodyBytes) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size >= settings.maxBodyBytes) finish();
      });
      // A deflate or brotli decoder ends with its compressed stream, which may come before the
      // response itself ends (a server can keep dribbling bytes after it). Only a response read
      // to its own end has freed its connection (back to the agent, or closed with --queue);
      // anything else is closed here, or it would stay open after its host lease is given back.
      body.on('end', () => finish(res.complete && res.readableEnded));
      // A body cut short still tells us the status; keep what arrived.
      body.on('error', () => finish());
      res.on('aborted', () => finish());
      // Undecoded bodies are complete when the response closes; decoders end on their own.
      if (body === res) res.on('close', () => finish());
    });
    req.once('socket', (socket) => {
      startDeadline();
      if (req?.reusedSocket !== true) guardSocket(socket, url.hostname, settings.policy);
    });
    req.on('error', fail);
    req.end();
  });
}
