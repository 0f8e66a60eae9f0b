import { lookup as dnsLookup } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import type { FetchLike } from '@httpsify/engine/channels';
import type { LookupFunction } from '../fetch-test/resolve-option.js';
import { guardSocket, policyLookup, refusedUrl, type OutboundPolicy } from './outbound-policy.js';

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` (the part `fetchBytesWith` uses: GET, manual redirects, an abort signal) on Node's
 * own HTTP client, so that every connection goes through the outbound policy's lookup hook and
 * socket check: `httpsify update` cannot be pointed at this machine or its networks by a channel
 * definition or a redirect. Bodies are passed on as they come (no content decoding asked for).
 */
export function policyFetch(
  policy: OutboundPolicy,
  lookup: LookupFunction = dnsLookup as unknown as LookupFunction,
): FetchLike {
  const policed = policyLookup(lookup, policy);
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const target = new URL(url);
      const refused = refusedUrl(target, policy);
      if (refused !== null) return reject(refused);
      if (target.protocol !== 'https:' && target.protocol !== 'http:')
        return reject(new Error(`${url}: not an http(s) URL`));
      const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = request(
        target,
        {
          method: 'GET',
          lookup: policed as never,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const headers = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
            headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 599) {
            res.destroy();
            return reject(new Error(`${url}: unusable HTTP status ${status}`));
          }
          const body = NULL_BODY.has(status)
            ? null
            : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
          if (body === null) res.resume();
          resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers }));
        },
      );
      req.once('socket', (socket) => guardSocket(socket, target.hostname, policy));
      req.on('error', reject);
      req.end();
    });
}
