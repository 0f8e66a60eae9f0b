import { createPublicKey, createHash } from 'node:crypto';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  createServer as createNetServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net';
import { createSecureContext } from 'node:tls';
import { selfSignedCertificate } from './servers.js';

/**
 * Every way HTTPS to an HTTP-only site can fail, on one loopback port (the first byte of a
 * connection decides between HTTP and TLS; the server name in the TLS hello picks the failure):
 *   reset.*     the connection is reset at once          hang.*    the handshake is never answered
 *   tls.*       answered with plain HTTP (no TLS there)  cert.*    a certificate the browser does not trust
 *   twin404.*   no TLS, and its www. twin answers 404 for everything (a shared host's answer)
 *   twinfail.*  no TLS, nor for its www. twin
 *   good.*      a working HTTPS site
 * Plain HTTP answers every host with `plain http <host> <path>` (and /success.txt as an open network's probe). `closedPort` refuses every
 * connection (Chromium maps `refused.*:443` there). Plain HTTP may also come as a proxy's request
 * (Firefox's tests send it so, to keep HTTPS on the names' own port 443). `trustedSpki` is the SPKI hash of the
 * certificate the good names get, for Chromium's `--ignore-certificate-errors-spki-list`.
 */
export interface DeadEndSite {
  port: number;
  closedPort: number;
  trustedSpki: string;
  /** Requests over HTTP, as `host path`. */
  plain: string[];
  close(): Promise<void>;
}

export async function startDeadEndSite(): Promise<DeadEndSite> {
  const trusted = selfSignedCertificate(
    'DNS:*.example.com,DNS:*.twin404.example.com,DNS:*.example.test,DNS:*.twin404.example.test',
  );
  const untrusted = selfSignedCertificate('DNS:cert.example.com,DNS:cert.example.test');
  const good = createSecureContext(trusted);
  const bad = createSecureContext(untrusted);
  const plain: string[] = [];
  const host = (req: IncomingMessage) => (req.headers.host ?? '').replace(/:\d+$/, '');
  // A request sent to this server as a proxy names its whole URL: its path is what the page shows.
  const path = (req: IncomingMessage) =>
    req.url?.startsWith('http://') ? new URL(req.url).pathname + new URL(req.url).search : req.url;
  const http = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    // The captive-portal probe's answer: the network is open.
    if (path(req) === '/success.txt')
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('success\n');
    if (path(req) !== '/favicon.ico') plain.push(`${host(req)} ${path(req)}`);
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' });
    res.end(`<!doctype html><title>plain</title><body>plain http ${host(req)} ${path(req)}</body>`);
  });
  const https = createHttpsServer(
    { ...trusted, SNICallback: (name, cb) => cb(null, name.startsWith('cert.') ? bad : good) },
    (req: IncomingMessage, res: ServerResponse) => {
      if (host(req).startsWith('www.twin404.'))
        return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
      res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' });
      res.end(`<!doctype html><title>secure</title><body>https ${host(req)} ${req.url}</body>`);
    },
  );
  https.on('tlsClientError', () => undefined);
  const sockets = new Set<Socket>();
  const front: Server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', (chunk) => {
      if (chunk[0] === 0x16) {
        // The server name sits in the hello in plain text.
        const hello = chunk.toString('latin1');
        if (hello.includes('reset.')) return void socket.resetAndDestroy();
        if (hello.includes('hang.')) return;
        const noTls =
          hello.includes('tls.') ||
          hello.includes('twinfail.') ||
          (hello.includes('twin404.') && !hello.includes('www.twin404.'));
        if (noTls) return void socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
      }
      socket.pause();
      socket.unshift(chunk);
      (chunk[0] === 0x16 ? https : http).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  // A port nothing listens on: taken, then given back.
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const spki = createPublicKey(trusted.key).export({ type: 'spki', format: 'der' });
  return {
    port: (front.address() as AddressInfo).port,
    closedPort,
    trustedSpki: createHash('sha256').update(spki).digest('base64'),
    plain,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        http.closeAllConnections();
        https.closeAllConnections();
        front.close(() => resolve());
      }),
  };
}
