import 'reflect-metadata';
import { KeyObject, webcrypto } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import * as x509 from '@peculiar/x509';
import type { LookupFunction } from '../../src/fetch-test/resolve-option.js';
import { issueLeaf, pem } from './fast-leaf-cert.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

/**
 * What a host of the local web does; a host's behaviour is the label before `.test`
 * (`h12.expired.test`), and names with no known label are `good`.
 */
export const BEHAVIOURS = [
  'good',
  'expired',
  'wrongname',
  'untrusted',
  'refused',
  'slow',
  'drip',
  'differs',
  'httponly',
  'loop',
  'downgrade',
  'flaky',
  'broken5xx',
  'huge',
  'mixed',
  'gone',
  'plaintls',
] as const;
export type Behaviour = (typeof BEHAVIOURS)[number];

export function behaviourOf(host: string): Behaviour {
  const label = host.toLowerCase().split('.').slice(-2, -1)[0] ?? '';
  return (BEHAVIOURS as readonly string[]).includes(label) ? (label as Behaviour) : 'good';
}

export interface LocalWeb {
  httpPort: number;
  httpsPort: number;
  /** PEM file of the test CA (for `--ca`). */
  caPath: string;
  /** Every name to loopback (`refused` hosts to 127.0.0.2 where nothing listens; `gone` fails). */
  lookup: LookupFunction;
  /** URL port -> server port, for the sweep's `connectPorts`. */
  connectPorts: Map<number, number>;
  /** The same as CLI options (`gone` hosts resolve there: --resolve cannot say "no such host"). */
  cliArgs: string[];
  /** Requests served, per scheme. */
  served: { http: number; https: number };
  /** Connections per host name, both schemes together, as the server sees them. */
  connections: ConnectionCounts;
  close(): Promise<void>;
}

/**
 * What a polite client looks like from the server: the most connections one host name had open
 * at once (HTTP and HTTPS together), and the shortest time between two requests' arrivals.
 */
export interface ConnectionCounts {
  /** Host name -> most connections open at once. */
  peakOpen: Map<string, number>;
  /** Host name -> shortest gap (ms) between two request arrivals; absent with one request. */
  minGapMs: Map<string, number>;
  /** Host name -> connections opened in all. */
  opened: Map<string, number>;
  /** Every gap between two request arrivals for one host, in arrival order. */
  gaps: { host: string; ms: number }[];
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY = 86_400_000;
const PLAIN_TLS_ADDRESS = '127.0.0.4';

function page(host: string, variant = ''): string {
  const words =
    variant === 'differs'
      ? 'this https site shows something else entirely: a parked domain for sale'
      : `welcome to ${host}, a small site about gardens, trains and the weather in the local hills`;
  const mixed =
    variant === 'mixed'
      ? `<script src="http://cdn.good.test/app.js"></script><img src="http://${host}/logo.png">`
      : '';
  return `<!doctype html><html><head><title>${host}</title>${mixed}</head><body><h1>${host}</h1><p>${words}</p><p><a href="http://${host}/about">about</a></p></body></html>`;
}

/**
 * A local "web" for sweep tests and the bench, no internet: one HTTP and one HTTPS server on
 * 127.0.0.1 answering any host name, the HTTPS one with a certificate issued per SNI name by a
 * throw-away CA (cached, at most `certCache` names), and scripted behaviours per host.
 */
export async function startLocalWeb(options: { certCache?: number } = {}): Promise<LocalWeb> {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-local-web-'));
  const caKeys = (await webcrypto.subtle.generateKey(ALG, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const now = Date.now();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=httpsify sweep test CA',
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 30 * DAY),
    keys: caKeys,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
    ],
  });
  const caPath = join(dir, 'ca.pem');
  writeFileSync(caPath, ca.toString('pem'));
  // One leaf key for every certificate: issuing is then one signature per name.
  const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const leafKeyPem = pem(
    'PRIVATE KEY',
    new Uint8Array(await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey)),
  );
  let serial = 2;
  const contexts = new Map<string, Promise<SecureContext>>();
  const maxCache = options.certCache ?? 5000;
  const signingKey = KeyObject.from(caKeys.privateKey);
  const issuerName = Buffer.from(ca.subjectName.toArrayBuffer());
  const leafSpki = Buffer.from(await webcrypto.subtle.exportKey('spki', leafKeys.publicKey));
  const selfKey = KeyObject.from(leafKeys.privateKey);
  const caPem = ca.toString('pem');
  const issue = async (name: string): Promise<SecureContext> => {
    const b = behaviourOf(name);
    const san = b === 'wrongname' ? `other-${name}` : name;
    // `untrusted`: signed by its own key under its own name, as a self-signed certificate is.
    const untrusted = b === 'untrusted';
    const cert = issueLeaf({
      serial: serial++,
      name: san,
      notBefore: new Date(b === 'expired' ? now - 10 * DAY : now - DAY),
      notAfter: new Date(b === 'expired' ? now - 2 * DAY : now + 10 * DAY),
      issuerName: untrusted ? Buffer.from(new x509.Name(`CN=${san}`).toArrayBuffer()) : issuerName,
      publicKey: leafSpki,
      signingKey: untrusted ? selfKey : signingKey,
    });
    return createSecureContext({ key: leafKeyPem, cert: untrusted ? cert : `${cert}${caPem}\n` });
  };
  const contextFor = (name: string): Promise<SecureContext> => {
    let ctx = contexts.get(name);
    if (ctx === undefined) {
      ctx = issue(name);
      contexts.set(name, ctx);
      if (contexts.size > maxCache) contexts.delete(contexts.keys().next().value as string);
    }
    return ctx;
  };

  const served = { http: 0, https: 0 };
  const connections: ConnectionCounts = {
    peakOpen: new Map(),
    minGapMs: new Map(),
    opened: new Map(),
    gaps: [],
  };
  const open = new Map<string, number>();
  const lastArrival = new Map<string, number>();
  const tagged = new WeakSet<object>();
  // A connection belongs to the host of its first request (HTTP) or its SNI name (HTTPS).
  const count = (socket: import('node:net').Socket, host: string): void => {
    if (tagged.has(socket) || host === '') return;
    tagged.add(socket);
    const n = (open.get(host) ?? 0) + 1;
    open.set(host, n);
    connections.opened.set(host, (connections.opened.get(host) ?? 0) + 1);
    if (n > (connections.peakOpen.get(host) ?? 0)) connections.peakOpen.set(host, n);
    socket.once('close', () => {
      const left = (open.get(host) ?? 1) - 1;
      if (left === 0) open.delete(host);
      else open.set(host, left);
    });
  };
  const arrived = (host: string): void => {
    const now = performance.now();
    const last = lastArrival.get(host);
    lastArrival.set(host, now);
    if (last === undefined) return;
    const gap = now - last;
    connections.gaps.push({ host, ms: gap });
    if (gap < (connections.minGapMs.get(host) ?? Infinity)) connections.minGapMs.set(host, gap);
  };
  const flakyCount = new Map<string, number>();
  const serveHuge = (res: ServerResponse, host: string): void => {
    res.writeHead(200, { 'content-type': 'text/html' });
    const chunk = Buffer.from(page(host).repeat(64));
    let left = 64 * 1024 * 1024;
    const pump = (): void => {
      while (left > 0) {
        left -= chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => (left = 0));
    pump();
  };
  const handle = (scheme: 'http' | 'https') => (req: IncomingMessage, res: ServerResponse) => {
    served[scheme]++;
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    count(req.socket, host);
    arrived(host);
    const b = behaviourOf(host);
    const html = (body: string, status = 200): void =>
      void res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    if (b === 'huge') return serveHuge(res, host);
    if (scheme === 'http') return html(page(host));
    switch (b) {
      case 'slow':
        return; // never answers
      case 'drip': {
        res.writeHead(200, { 'content-type': 'text/html' });
        const timer = setInterval(() => res.write('<p>.'), 200);
        res.on('close', () => clearInterval(timer));
        return;
      }
      case 'differs':
        return html(page(host, 'differs'));
      case 'mixed':
        return html(page(host, 'mixed'));
      case 'loop':
        return void res.writeHead(302, { location: `https://${host}/` }).end();
      case 'downgrade':
        return void res.writeHead(301, { location: `http://${host}/` }).end();
      case 'broken5xx':
        return html('<h1>Service Unavailable</h1>', 503);
      case 'flaky': {
        // Every other answer is a 503: the sweep's one HTTPS retry gets the page.
        const n = (flakyCount.get(host) ?? 0) + 1;
        flakyCount.set(host, n);
        return n % 2 === 1 ? html('<h1>Service Unavailable</h1>', 503) : html(page(host));
      }
      default:
        return html(page(host));
    }
  };
  const http = createHttpServer({ keepAlive: true } as never, handle('http'));
  const https = createHttpsServer(
    {
      SNICallback: (name, cb) => {
        // `httponly` hosts have no HTTPS: the connection is dropped at the handshake.
        if (behaviourOf(name) === 'httponly') return cb(new Error('no HTTPS for this name'));
        contextFor(name).then(
          (ctx) => cb(null, ctx),
          (err: Error) => cb(err),
        );
      },
    },
    handle('https'),
  );
  for (const s of [http, https]) s.on('clientError', (_err, socket) => socket.destroy());
  https.on('secureConnection', (socket: import('node:tls').TLSSocket) => {
    if (typeof socket.servername === 'string') count(socket, socket.servername.toLowerCase());
  });
  const listen = (s: Server, port = 0, host = '127.0.0.1'): Promise<number> =>
    new Promise((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, host, () => resolve((s.address() as AddressInfo).port));
    });
  const [httpPort, httpsPort] = [await listen(http), await listen(https)];
  // `plaintls` hosts live at 127.0.0.4: the same HTTP site, but the HTTPS port speaks plain
  // HTTP, as a misconfigured server does; a TLS client sees a protocol error, not a refusal.
  const plainHttp = createNetServer((socket) => http.emit('connection', socket));
  const plainOnTls = createNetServer((socket) => {
    socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n'));
    socket.on('error', () => socket.destroy());
  });
  await listen(plainHttp, httpPort, PLAIN_TLS_ADDRESS);
  await listen(plainOnTls, httpsPort, PLAIN_TLS_ADDRESS);
  const lookup: LookupFunction = (hostname, opts, callback) => {
    const b = behaviourOf(hostname);
    process.nextTick(() => {
      if (b === 'gone')
        return callback(
          Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
          '',
        );
      const address =
        b === 'refused' ? '127.0.0.2' : b === 'plaintls' ? PLAIN_TLS_ADDRESS : '127.0.0.1';
      if (opts.all === true) callback(null, [{ address, family: 4 }]);
      else callback(null, address, 4);
    });
  };
  return {
    httpPort,
    httpsPort,
    caPath,
    lookup,
    connectPorts: new Map([
      [80, httpPort],
      [443, httpsPort],
    ]),
    cliArgs: [
      // Everything here is on loopback, which the outbound policy refuses without this.
      '--allow-private',
      '--ca',
      caPath,
      '--resolve',
      '*.refused.test:127.0.0.2',
      '--resolve',
      `*.plaintls.test:${PLAIN_TLS_ADDRESS}`,
      '--resolve',
      '*:127.0.0.1',
      '--connect-to',
      `80:${httpPort}`,
      '--connect-to',
      `443:${httpsPort}`,
    ],
    served,
    connections,
    close: async () => {
      http.closeAllConnections();
      https.closeAllConnections();
      for (const s of [plainHttp, plainOnTls]) s.close();
      await Promise.all(
        [http, https].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      );
    },
  };
}

/** A ruleset library of one trivial ruleset per host (each target implies its test URL). */
export function writeLibrary(dir: string, hosts: readonly string[]): void {
  for (const host of hosts) {
    writeFileSync(
      join(dir, `${host}.xml`),
      `<ruleset name="${host}">\n\t<target host="${host}" />\n\t<rule from="^http:" to="https:" />\n</ruleset>\n`,
    );
  }
}
