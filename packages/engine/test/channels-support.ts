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
import {
  type ChannelDefinition,
  type ChannelFiles,
  generateSigningKeyPair,
  keyCertificateFiles,
  MIN_MODULUS_BITS,
  publicJwkOf,
  releaseFiles,
  type SigningKeyPair,
} from '../src/channels/index.js';
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
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
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
  | { kind: 'replace'; body: Uint8Array }
  /** Answer with this redirect status and Location. */
  | { kind: 'redirect'; status: number; location: string }
  /** Serve the file unchanged but label it with this Content-Encoding (a .gz file as "gzip"). */
  | { kind: 'encoding'; encoding: string };

export interface ChannelServer {
  /** `https://127.0.0.1:PORT/channel/` */
  urlPrefix: string;
  faults: Map<string, Fault>;
  /** Every request path, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Serves files of `root` under `/channel/` over HTTPS on 127.0.0.1, with injectable faults. */
export async function startChannelServer(
  cert: TestCertificate,
  root: string,
): Promise<ChannelServer> {
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
    if (fault?.kind === 'redirect') {
      res.writeHead(fault.status, { location: fault.location }).end();
      return;
    }
    const send = (body: Uint8Array): void => {
      if (fault?.kind === 'interrupt') {
        res.writeHead(200, { 'content-length': String(body.byteLength) });
        res.write(body.subarray(0, fault.sendBytes), () => res.destroy());
        return;
      }
      const headers: Record<string, string> = { 'content-length': String(body.byteLength) };
      if (fault?.kind === 'encoding') headers['content-encoding'] = fault.encoding;
      res.writeHead(200, headers).end(body);
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
 * connection surfaces as a stream error exactly as with real fetch. Like fetch, it undoes a
 * gzip Content-Encoding and, asked for `redirect: 'manual'`, returns a redirect as it came.
 */
export function fetchTrusting(ca: string): (url: string, init: RequestInit) => Promise<Response> {
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const req = httpsRequest(url, { ca, signal: init.signal ?? undefined }, (res) => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers))
          if (typeof v === 'string') headers.set(k, v);
        const raw = Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>;
        const body =
          res.headers['content-encoding'] === 'gzip'
            ? raw.pipeThrough(
                new DecompressionStream('gzip') as unknown as ReadableWritablePair<
                  Uint8Array,
                  Uint8Array
                >,
              )
            : raw;
        // Node marks a response cut short as "aborted"; turn it into a stream error.
        res.on('aborted', () =>
          res.destroy(new Error('connection closed before the body was complete')),
        );
        const status = res.statusCode ?? 0;
        resolve(new Response(status === 204 || status === 304 ? null : body, { status, headers }));
      });
      req.on('error', reject);
      req.end();
    });
}

export function writeFiles(dir: string, files: Record<string, Uint8Array | string>): void {
  for (const [name, data] of Object.entries(files)) writeFileSync(join(dir, name), data);
}

/** A publisher's keys: the root named in the definition and its certified online keys. */
export interface TestPublisher {
  root: SigningKeyPair;
  /** Online signing key of each certified version. */
  keys: Map<number, SigningKeyPair>;
}

/** 3072-bit keys: the smallest clients accept, and quicker to make than 4096. */
export function testKeyPair(): Promise<SigningKeyPair> {
  return generateSigningKeyPair(MIN_MODULUS_BITS);
}

export async function testPublisher(): Promise<TestPublisher> {
  const [root, first] = await Promise.all([testKeyPair(), testKeyPair()]);
  return { root, keys: new Map([[1, first]]) };
}

/** A format 2 definition for a publisher (every URL in scope unless told otherwise). */
export function testDefinition(
  publisher: TestPublisher,
  urlPrefix: string,
  extra: Partial<ChannelDefinition> = {},
): ChannelDefinition {
  return {
    name: 'Test channel',
    urlPrefix,
    rootKey: publicJwkOf(publisher.root.publicKey),
    scope: '',
    destinations: [],
    minTimestamp: 0,
    maxAgeDays: 30,
    minKeyVersion: 1,
    replacesDefaults: false,
    ...extra,
  };
}

/**
 * Publishes into a channel directory the way `httpsify publish` does: the key certificate,
 * the gzipped bundle, the signed release, then `latest-timestamp` (unless `advertise` is
 * false). `embedded` stamps a different timestamp inside the bundle; `keyVersion` picks the
 * signing key (default 1); `signWith` signs with another key while claiming that version.
 */
export async function publishChannelFiles(
  dir: string,
  def: ChannelDefinition,
  publisher: TestPublisher,
  rulesets: Ruleset[],
  ts: number,
  options: {
    embedded?: number;
    advertise?: boolean;
    keyVersion?: number;
    signWith?: SigningKeyPair;
  } = {},
): Promise<ChannelFiles> {
  const version = options.keyVersion ?? 1;
  const key = publisher.keys.get(version);
  if (key === undefined) throw new Error(`test publisher has no key version ${version}`);
  const bundle = compileBundle(rulesets, { timestamp: options.embedded ?? ts });
  const files = {
    ...(await keyCertificateFiles(def, publisher.root.privateKey, key.publicKey, version)),
    ...(await releaseFiles(
      def,
      bundle,
      ts,
      (options.signWith ?? key).privateKey,
      version,
      new Uint8Array(gzipSync(bundle)),
    )),
  };
  writeFiles(dir, files);
  if (options.advertise !== false) writeFiles(dir, { 'latest-timestamp': `${ts}\n` });
  return files;
}
