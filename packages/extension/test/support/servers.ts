import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoggedRequest {
  secure: boolean;
  host: string;
  path: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, secure: boolean) => void;

export interface DualServer {
  port: number;
  log: LoggedRequest[];
  close(): Promise<void>;
}

/**
 * A throwaway self-signed certificate for CN example.test (the browsers run with certificate
 * errors ignored); `altNames` becomes its subjectAltName list when given.
 */
export function selfSignedCertificate(
  altNames: string | null = 'DNS:*.example.test,DNS:*.uncovered.test',
): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-cert-'));
  const san = altNames === null ? [] : ['-addext', `subjectAltName=${altNames}`];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=example.test',
      ...san,
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const pair = {
    key: readFileSync(join(dir, 'key.pem')),
    cert: readFileSync(join(dir, 'cert.pem')),
  };
  rmSync(dir, { recursive: true, force: true });
  return pair;
}

/**
 * Plain HTTP and TLS on one loopback port: a DNR `upgradeScheme` keeps the port, so the
 * upgraded request must find TLS where the original found HTTP. The first byte decides
 * (0x16 starts a TLS handshake).
 */
export async function startDualServer(handler: Handler): Promise<DualServer> {
  const log: LoggedRequest[] = [];
  const wrap = (secure: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    log.push({ secure, host: (req.headers.host ?? '').replace(/:\d+$/, ''), path: req.url ?? '' });
    handler(req, res, secure);
  };
  const http = createHttpServer(wrap(false));
  const https = createHttpsServer(selfSignedCertificate(), wrap(true));
  const front: Server = createNetServer((socket) => {
    socket.once('data', (chunk) => {
      socket.pause();
      socket.unshift(chunk);
      (chunk[0] === 0x16 ? https : http).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const port = (front.address() as AddressInfo).port;
  return {
    port,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        https.closeAllConnections();
        front.close(() => resolve());
      }),
  };
}

/** Plain HTTP only: a TLS handshake gets an HTTP error back, so HTTPS fails at once. */
export async function startHttpOnly(): Promise<{ server: HttpServer; port: number }> {
  const server = createHttpServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<!doctype html><title>plain</title><body>plain http ${req.headers.host}${req.url}</body>`,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** HTTP answers; a TLS handshake is left hanging (the 3-second fallback case). */
export async function startTlsHang(http: HttpServer): Promise<{ server: Server; port: number }> {
  const server = createNetServer((socket) => {
    socket.once('data', (chunk) => {
      if (chunk[0] === 0x16) return; // never answer
      socket.pause();
      socket.unshift(chunk);
      http.emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}
