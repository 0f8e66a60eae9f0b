import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throw-away CA and a leaf certificate it signed for `hosts`, made with the openssl CLI. */
export interface TestPki {
  caPath: string;
  key: string;
  cert: string;
}

export function makeTestPki(hosts: readonly string[]): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-fetch-pki-'));
  const p = (name: string): string => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const run = (args: string[]): void => {
    execFileSync('openssl', args, { stdio: 'ignore' });
  };
  run([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.pem'),
    '-days',
    '1',
    '-subj',
    '/CN=httpsify fetch-test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  run([
    'req',
    ...ec,
    '-keyout',
    p('leaf.key'),
    '-out',
    p('leaf.csr'),
    '-subj',
    `/CN=${hosts[0] ?? 'localhost'}`,
  ]);
  writeFileSync(
    p('leaf.ext'),
    `basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=${hosts.map((h) => `DNS:${h}`).join(',')}\n`,
  );
  run([
    'x509',
    '-req',
    '-in',
    p('leaf.csr'),
    '-CA',
    p('ca.pem'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('leaf.pem'),
    '-days',
    '1',
    '-extfile',
    p('leaf.ext'),
  ]);
  return {
    caPath: p('ca.pem'),
    key: readFileSync(p('leaf.key'), 'utf8'),
    cert: readFileSync(p('leaf.pem'), 'utf8'),
  };
}

/** Answers one request; `host` is the Host header's name without the port. */
export type Site = (req: { host: string; path: string }, res: ServerResponse) => void;

export interface LocalServers {
  httpPort: number;
  httpsPort: number;
  /** Accepts TCP connections and resets them at once. */
  resetPort: number;
  /** Nothing listens here (a port that was free a moment ago). */
  closedPort: number;
  /** `http://host:port/path` or `https://…` of every request served, in order. */
  requests: string[];
  close(): Promise<void>;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

function dispatch(scheme: string, sites: Record<string, Site>, requests: string[]) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const hostHeader = req.headers.host ?? '';
    const host = hostHeader.replace(/:\d+$/, '');
    requests.push(`${scheme}://${hostHeader}${req.url ?? '/'}`);
    const site = sites[host];
    if (site === undefined) res.writeHead(421).end('no such site');
    else site({ host, path: req.url ?? '/' }, res);
  };
}

/** An HTTP and an HTTPS server on 127.0.0.1 serving `httpSites` / `httpsSites` by host name, plus a resetting port and a closed one. */
export async function startLocalServers(
  pki: TestPki,
  httpSites: Record<string, Site>,
  httpsSites: Record<string, Site>,
): Promise<LocalServers> {
  const requests: string[] = [];
  const http = createHttpServer(dispatch('http', httpSites, requests));
  const https = createHttpsServer(
    { key: pki.key, cert: pki.cert },
    dispatch('https', httpsSites, requests),
  );
  const reset = createNetServer((socket) => socket.resetAndDestroy());
  const probe = createNetServer();
  const [httpPort, httpsPort, resetPort, closedPort] = await Promise.all([
    listen(http),
    listen(https),
    listen(reset),
    listen(probe),
  ]);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return {
    httpPort: httpPort!,
    httpsPort: httpsPort!,
    resetPort: resetPort!,
    closedPort: closedPort!,
    requests,
    close: async () => {
      http.closeAllConnections();
      https.closeAllConnections();
      await Promise.all(
        [http, https, reset].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      );
    },
  };
}

export function html(body: string): (req: unknown, res: ServerResponse) => void {
  return (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`);
  };
}

export function status(
  code: number,
  location?: string,
): (req: unknown, res: ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(code, location !== undefined ? { location } : {}).end();
  };
}
