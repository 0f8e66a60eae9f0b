import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { createSecureContext } from 'node:tls';
import { selfSignedCertificate } from './servers.js';

export interface SeenRequest {
  secure: boolean;
  method: string;
  host: string;
  path: string;
}

export interface ProtectionSite {
  port: number;
  log: SeenRequest[];
  /** Requests to a host (any scheme), as `METHOD scheme path`. */
  seen(host: string): string[];
  close(): Promise<void>;
}

/** The hosts whose TLS handshake fails (the server refuses their SNI name). */
export const NO_TLS = new Set([
  'ruled.example.com',
  'ruled.example.test',
  'nossl.example.com',
  'bare.example.org',
  'hotel.example.com',
  'nossl.example.test',
  'bare.example.test',
  'hotel.example.test',
]);

/**
 * One loopback port speaking HTTP and TLS (the first byte decides), with a TLS handshake that
 * fails for the NO_TLS names: every scenario lives on one port, so browsers can map any host to
 * it (Chromium: `host:80` and `host:443`, Firefox: `network.dns.localDomains`).
 *   /pixel.png    a 1x1 image;   /set-cookie   sets `sid` without Secure;
 *   /success.txt  the captive-portal probe's answer;   /login   a portal's login page;
 *   intranet/     an HTTP page embedding http:// images of cdn.* (learned) and other.* hosts;
 *   intranet/embed?src=URL&src=URL   an HTTP page embedding the images given.
 *   Any path ending in .png answers the image.
 */
export async function startProtectionSite(
  cdnHost: string,
  otherHost: string,
): Promise<ProtectionSite> {
  // No subjectAltName, as the browsers' certificate checks are off for these hosts.
  const { key, cert } = selfSignedCertificate(null);
  const context = createSecureContext({ key, cert });
  const log: SeenRequest[] = [];
  let port = 0;
  const handler = (secure: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = req.url ?? '';
    log.push({ secure, method: req.method ?? '', host, path });
    if (path === '/favicon.ico') return void res.writeHead(404).end();
    if (path.split('?')[0]?.endsWith('.png')) {
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' });
      return void res.end(
        Buffer.from(
          'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
          'base64',
        ),
      );
    }
    if (path === '/success.txt')
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('success\n');
    if (path === '/login')
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>Hotel wifi</title>Please log in');
    const headers: Record<string, string | string[]> = {
      'content-type': 'text/html',
      'cache-control': 'no-store',
    };
    if (path === '/set-cookie')
      headers['set-cookie'] = ['sid=abc; Path=/', 'pref=1; Path=/; Secure'];
    const p = port === 0 || req.headers.host?.includes(':') !== true ? '' : `:${port}`;
    const embedded =
      host === 'intranet' && path.startsWith('/embed?')
        ? new URL(path, 'http://intranet').searchParams.getAll('src')
        : null;
    const body =
      embedded !== null
        ? embedded.map((src) => `<img src="${src.replace(/[^\w:/.?=&%-]/g, '')}">`).join('')
        : host === 'intranet'
          ? `<img id="known" src="http://${cdnHost}${p}/pixel.png?n=${Date.now()}"><img id="other" src="http://${otherHost}${p}/pixel.png?n=${Date.now()}">`
          : '';
    res
      .writeHead(200, headers)
      .end(
        `<!doctype html><title>${host}</title><body>${secure ? 'https' : 'http'} ${host} ${path}${body}</body>`,
      );
  };
  const http = createHttpServer(handler(false));
  const https = createHttpsServer(
    {
      key,
      cert,
      SNICallback: (name, cb) =>
        NO_TLS.has(name) ? cb(new Error(`no TLS for ${name}`)) : cb(null, context),
    },
    handler(true),
  );
  https.on('tlsClientError', () => undefined);
  const front: Server = createNetServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', (chunk) => {
      socket.pause();
      socket.unshift(chunk);
      (chunk[0] === 0x16 ? https : http).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  port = (front.address() as AddressInfo).port;
  return {
    port,
    log,
    seen: (host) =>
      log
        .filter((r) => r.host === host)
        .map((r) => `${r.method} ${r.secure ? 'https' : 'http'} ${r.path}`),
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        https.closeAllConnections();
        front.close(() => resolve());
      }),
  };
}
