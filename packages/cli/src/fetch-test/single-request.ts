import { request as httpRequest, type Agent as HttpAgent, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { LookupFunction } from './resolve-option.js';

/** How one request is made: name resolution, extra trust, time limit. */
export interface RequestSettings {
  lookup: LookupFunction;
  /** Trusted CA certificates (PEM) for https; undefined keeps Node's defaults. */
  ca: string[] | undefined;
  timeoutMs: number;
  /** Bodies are cut off here; page structure only needs the start of a page. */
  maxBodyBytes: number;
  /** Why `url` may not be fetched at all (links --verify: a private IP address), or null. */
  refuse?: (url: URL) => RequestFailure | null;
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
export type FailureKind = 'dns' | 'connect' | 'tls' | 'timeout' | 'protocol';

export class RequestFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
  }
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'ENODATA', 'EAI_FAIL']);
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT']);

function classify(err: NodeJS.ErrnoException): RequestFailure {
  if (err instanceof RequestFailure) return err;
  const code = err.code ?? '';
  if (DNS_CODES.has(code)) return new RequestFailure('dns', `cannot resolve host (${code})`);
  if (CONNECT_CODES.has(code)) return new RequestFailure('connect', `connection failed (${code})`);
  // TLS errors come as ERR_SSL_*, ERR_TLS_*, or certificate codes such as CERT_HAS_EXPIRED.
  if (/^ERR_(SSL|TLS)_|CERT|SELF_SIGNED|UNABLE_TO_|HOSTNAME/.test(code) || /SSL|TLS|certificate/i.test(err.message)) {
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
 * One GET without following redirects. The whole exchange (connect, TLS, headers, body) shares
 * one deadline, so a slow-dripping server cannot hold a worker forever.
 */
export async function requestOnce(url: URL, settings: RequestSettings): Promise<RawResponse> {
  const refused = settings.refuse?.(url) ?? null;
  if (refused !== null) throw refused;
  if (settings.gate === undefined) return requestNow(url, settings);
  const release = await settings.gate(url);
  try {
    return await requestNow(url, settings);
  } finally {
    release();
  }
}

function requestNow(url: URL, settings: RequestSettings): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const options = {
      method: 'GET',
      lookup: settings.lookup as never,
      headers: { 'user-agent': settings.userAgent ?? 'httpsify-fetch-test/0.1', accept: 'text/html,*/*;q=0.8', 'accept-encoding': 'gzip, deflate, br' },
      agent: settings.agents === undefined ? (false as const) : secure ? settings.agents.https : settings.agents.http,
      ...(secure && settings.ca !== undefined ? { ca: settings.ca } : {}),
    };
    let settled = false;
    // Declared before the request exists: errors may surface while it is being created.
    // eslint-disable-next-line prefer-const -- assigned once, but after the closures that read it
    let req: ClientRequest | undefined;
    const fail = (err: NodeJS.ErrnoException): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req?.destroy();
      reject(classify(err));
    };
    const timer = setTimeout(() => fail(new RequestFailure('timeout', `no complete response within ${settings.timeoutMs} ms`)), settings.timeoutMs);
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
      body.on('end', () => finish(true));
      // A body cut short still tells us the status; keep what arrived.
      body.on('error', () => finish());
      res.on('aborted', () => finish());
      // Undecoded bodies are complete when the response closes; decoders end on their own.
      if (body === res) res.on('close', () => finish());
    });
    req.on('error', fail);
    req.end();
  });
}
