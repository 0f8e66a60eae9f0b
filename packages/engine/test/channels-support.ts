import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request as httpsRequest, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { compileBundle } from '../src/bundle/write.js';
import { signBytes } from '../src/channels/index.js';
import type { Ruleset } from '../src/model/ruleset.js';

/** A self-signed certificate for 127.0.0.1, made with the openssl CLI for this test run. */
export interface TestCertificate {
  key: string;
  cert: string;
  /** PEM file of the certificate, for NODE_EXTRA_CA_CERTS in child processes. */
  certPath: string;
}

export function makeCertificate(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-cert-'));
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath };
}

/** How the server misbehaves for one file name (path relative to the channel root). */
export type Fault =
  | { kind: 'status'; status: number }
  /** Announce the full length, send `sendBytes` of the body, then drop the connection. */
  | { kind: 'interrupt'; sendBytes: number }
  /** Serve these bytes instead of the file. */
  | { kind: 'replace'; body: Uint8Array };

export interface ChannelServer {
  /** `https://127.0.0.1:PORT/channel/` */
  urlPrefix: string;
  faults: Map<string, Fault>;
  /** Every request path, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Serves files of `root` under `/channel/` over HTTPS on 127.0.0.1, with injectable faults. */
export async function startChannelServer(cert: TestCertificate, root: string): Promise<ChannelServer> {
  const faults = new Map<string, Fault>();
  const requests: string[] = [];
  const server: Server = createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    requests.push(path);
    const name = path.startsWith('/channel/') ? path.slice('/channel/'.length) : '';
    if (name === '' || normalize(name) !== name || name.includes('/')) {
      res.writeHead(404).end();
      return;
    }
    const fault = faults.get(name);
    if (fault?.kind === 'status') {
      res.writeHead(fault.status).end('failure injected by the test');
      return;
    }
    const send = (body: Uint8Array): void => {
      if (fault?.kind === 'interrupt') {
        res.writeHead(200, { 'content-length': String(body.byteLength) });
        res.write(body.subarray(0, fault.sendBytes), () => res.destroy());
        return;
      }
      res.writeHead(200, { 'content-length': String(body.byteLength) }).end(body);
    };
    if (fault?.kind === 'replace') {
      send(fault.body);
      return;
    }
    readFile(join(root, name)).then(
      (body) => send(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    urlPrefix: `https://127.0.0.1:${port}/channel/`,
    faults,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A WHATWG-style fetch that trusts the test CA, built on node:https (Node's global fetch
 * cannot be given a CA without the undici package). The body streams, so a dropped
 * connection surfaces as a stream error exactly as with real fetch.
 */
export function fetchTrusting(ca: string): (url: string, init: RequestInit) => Promise<Response> {
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const req = httpsRequest(url, { ca, signal: init.signal ?? undefined }, (res) => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
        const body = Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>;
        // Node marks a response cut short as "aborted"; turn it into a stream error.
        res.on('aborted', () => res.destroy(new Error('connection closed before the body was complete')));
        resolve(new Response(body, { status: res.statusCode ?? 0, headers }));
      });
      req.on('error', reject);
      req.end();
    });
}

export function writeFiles(dir: string, files: Record<string, Uint8Array | string>): void {
  for (const [name, data] of Object.entries(files)) writeFileSync(join(dir, name), data);
}

/**
 * Publishes into a channel directory the way `httpsify publish` does: the gzip of the compiled
 * bundle and an RSA-PSS signature over the gz bytes, then `latest-timestamp` (unless
 * `advertise` is false). `embedded` stamps a different timestamp inside the bundle.
 */
export async function publishChannelFiles(
  dir: string,
  rulesets: Ruleset[],
  ts: number,
  privateKey: JsonWebKey,
  options: { embedded?: number; advertise?: boolean } = {},
): Promise<{ gz: Uint8Array; sig: Uint8Array }> {
  const gz = new Uint8Array(gzipSync(compileBundle(rulesets, { timestamp: options.embedded ?? ts })));
  const sig = await signBytes(privateKey, gz);
  writeFiles(dir, { [`rulesets.${ts}.bundle.gz`]: gz, [`rulesets.${ts}.sig`]: sig });
  if (options.advertise !== false) writeFiles(dir, { 'latest-timestamp': `${ts}\n` });
  return { gz, sig };
}
