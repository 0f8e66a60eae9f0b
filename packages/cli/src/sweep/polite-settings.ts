import { readCaFile } from '../net/ca-file.js';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createSecureContext } from 'node:tls';
import { rootCertificates } from 'node:tls';
import {
  lookupWithOverrides,
  parseResolveOptions,
  type LookupFunction,
} from '../fetch-test/resolve-option.js';
import type { RequestSettings } from '../fetch-test/single-request.js';
import { cachedLookup } from './dns-cache.js';
import { HostGate, hostKey, type PolitenessLimits, type SharedHostLimits } from './host-gate.js';
import { trustedResolveNames } from '../net/outbound-policy.js';
import type { Socket } from 'node:net';

/** An idle keep-alive connection is closed after this long (it still counts at the host). */
const IDLE_MS = 2000;

export const SWEEP_USER_AGENT =
  'httpsify-sweep/0.1 (HTTPS Everywhere ruleset health check by httpsify)';

export interface SweepRequestOptions extends PolitenessLimits {
  timeoutMs: number;
  maxBodyBytes: number;
  resolve: readonly string[];
  caFiles: readonly string[];
  /** Replaces name resolution altogether (the tests' local web). */
  lookup?: LookupFunction;
  /** Connect to another port than the URL's (`--connect-to 443:8443`): a local test web, a proxy. */
  connectPorts?: ReadonlyMap<number, number>;
  /** `--allow-private`: also fetch loopback, private and link-local addresses (a local test web). */
  allowPrivate: boolean;
  /**
   * With --queue: the per-host limits held across all workers (queue/host-leases.ts). Each
   * connection then carries one request, so the leases are the connections a host sees.
   */
  shared?: SharedHostLimits;
}

export interface SweepClient {
  settings: RequestSettings;
  gate: HostGate;
  close(): void;
}

type HttpConnectionOptions = Parameters<HttpAgent['createConnection']>[0];
type HttpsConnectionOptions = Parameters<HttpsAgent['createConnection']>[0];
const mapped = (ports: ReadonlyMap<number, number>, fallback: number, port: unknown): number => {
  const p = port === undefined || port === null || port === '' ? fallback : Number(port);
  return ports.get(p) ?? p;
};

/**
 * Connections per host name across both schemes in one process: a new connection waits while
 * the host has `limit` open, and closes an idle keep-alive one of either pool to make room (an
 * idle HTTP connection must not hold the HTTPS side back, nor add to what the host sees).
 */
class ConnectionLimiter {
  private readonly open = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(
    private readonly limit: number,
    private readonly closeIdle: (host: string) => boolean,
  ) {}

  async acquire(host: string): Promise<() => void> {
    while ((this.open.get(host) ?? 0) >= this.limit) {
      this.closeIdle(host);
      await new Promise<void>((resolve) => {
        const list = this.waiting.get(host) ?? [];
        list.push(resolve);
        this.waiting.set(host, list);
      });
    }
    this.open.set(host, (this.open.get(host) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(host) ?? 1) - 1;
      if (left === 0) this.open.delete(host);
      else this.open.set(host, left);
      const list = this.waiting.get(host);
      const next = list?.shift();
      if (list !== undefined && list.length === 0) this.waiting.delete(host);
      next?.();
    };
  }
}

interface PoliteAgentOptions {
  ports: ReadonlyMap<number, number>;
  defaultPort: number;
  limiter: () => ConnectionLimiter;
  /** How long a keep-alive connection may sit idle before it is closed. */
  idleMs: number;
}

/**
 * Opens each connection through the per-host connection limiter (asynchronously: the agent
 * waits for the callback), to a mapped port; pools stay keyed by the URL's host and port.
 */
function politeConnection<O extends { host?: string | null; port?: unknown }>(
  o: PoliteAgentOptions,
  options: O,
  callback: ((err: Error | null, socket?: Socket) => void) | undefined,
  connect: (options: O) => Socket,
): undefined {
  const host = hostKey(String(options.host ?? ''));
  void o
    .limiter()
    .acquire(host)
    .then((release) => {
      let socket: Socket;
      try {
        socket = connect({ ...options, port: mapped(o.ports, o.defaultPort, options.port) });
      } catch (err) {
        release();
        callback?.(err as Error);
        return;
      }
      socket.once('close', release);
      callback?.(null, socket);
    })
    .catch((err: Error) => callback?.(err));
  return undefined;
}

class PoliteHttpAgent extends HttpAgent {
  constructor(
    private readonly polite: PoliteAgentOptions,
    options: ConstructorParameters<typeof HttpAgent>[0],
  ) {
    super(options);
  }

  override createConnection(
    options: HttpConnectionOptions,
    callback?: Parameters<HttpAgent['createConnection']>[1],
  ): ReturnType<HttpAgent['createConnection']> {
    return politeConnection(
      this.polite,
      options,
      callback as never,
      (o) => super.createConnection(o) as Socket,
    );
  }

  // Typed void in @types/node; Node's agent reads the boolean it returns.
  override keepSocketAlive(socket: Socket): void {
    const keep = super.keepSocketAlive(socket) as unknown as boolean;
    if (keep) socket.setTimeout(this.polite.idleMs);
    return keep as unknown as void;
  }
}

class PoliteHttpsAgent extends HttpsAgent {
  constructor(
    private readonly polite: PoliteAgentOptions,
    options: ConstructorParameters<typeof HttpsAgent>[0],
  ) {
    super(options);
  }

  override createConnection(
    options: HttpsConnectionOptions,
    callback?: Parameters<HttpsAgent['createConnection']>[1],
  ): ReturnType<HttpsAgent['createConnection']> {
    return politeConnection(
      this.polite,
      options,
      callback as never,
      (o) => super.createConnection(o) as Socket,
    );
  }

  // Typed void in @types/node; Node's agent reads the boolean it returns.
  override keepSocketAlive(socket: Socket): void {
    const keep = super.keepSocketAlive(socket) as unknown as boolean;
    if (keep) socket.setTimeout(this.polite.idleMs);
    return keep as unknown as void;
  }
}

/** Closes one idle keep-alive connection to `host` in any of `agents`; whether there was one. */
function closeIdleConnection(agents: readonly HttpAgent[], host: string): boolean {
  for (const agent of agents) {
    for (const [name, sockets] of Object.entries(agent.freeSockets)) {
      if (name.startsWith(`${host}:`) || name.startsWith(`${host}.:`)) {
        const socket = sockets?.[0];
        if (socket !== undefined) {
          socket.destroy();
          return true;
        }
      }
    }
  }
  return false;
}

/**
 * `--resolve` for a sweep: besides exact names, `*.example.com:IP` answers every name below
 * example.com and `*:IP` every name (a local test web); the rest goes to the system resolver.
 */
export function wildcardLookup(map: ReadonlyMap<string, string>): LookupFunction {
  const exact = lookupWithOverrides(map);
  if (![...map.keys()].some((k) => k.startsWith('*'))) return exact;
  return (hostname, options, callback) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (!map.has(name)) {
      const labels = name.split('.');
      for (let i = 1; i <= labels.length; i++) {
        const pattern = i === labels.length ? '*' : `*.${labels.slice(i).join('.')}`;
        const address = map.get(pattern);
        if (address !== undefined)
          return lookupWithOverrides(new Map([[name, address]]))(name, options, callback);
      }
    }
    exact(hostname, options, callback);
  };
}

/** `--connect-to FROM:TO` port pairs. */
export function parseConnectTo(values: readonly string[]): Map<number, number> {
  const map = new Map<number, number>();
  for (const v of values) {
    const m = /^(\d{1,5}):(\d{1,5})$/.exec(v);
    const from = Number(m?.[1]);
    const to = Number(m?.[2]);
    if (m === null || from < 1 || from > 65535 || to < 1 || to > 65535)
      throw new Error(`--connect-to ${JSON.stringify(v)}: expected PORT:PORT, e.g. 443:8443`);
    map.set(from, to);
  }
  return map;
}

/**
 * Request settings for a sweep: keep-alive agents whose connections to one host name, both
 * schemes together, never exceed the per-host limit; a DNS cache in front of the resolver; the
 * outbound policy on every connection; the politeness gate (shared through Redis with
 * --queue); and a User-Agent that says who is asking. Extra CAs go into one shared TLS context,
 * so connection pool names stay short (an explicit `ca` list would be part of every pool's name).
 */
export function sweepClient(options: SweepRequestOptions): SweepClient {
  const extraCa = options.caFiles.map(readCaFile);
  const resolveMap = parseResolveOptions(options.resolve);
  const base = options.lookup ?? wildcardLookup(resolveMap);
  // With --queue a connection carries one request: the shared leases then count connections.
  const keepAlive = options.shared === undefined;
  const agentOptions = {
    keepAlive,
    maxSockets: options.perHostConnections,
    maxFreeSockets: options.perHostConnections,
    scheduling: 'lifo' as const,
  };
  const secureContext =
    extraCa.length > 0 ? createSecureContext({ ca: [...rootCertificates, ...extraCa] }) : undefined;
  const ports = options.connectPorts ?? new Map<number, number>();
  // eslint-disable-next-line prefer-const -- the agents and their limiter refer to each other
  let limiter: ConnectionLimiter;
  const polite = (defaultPort: number): PoliteAgentOptions => ({
    ports,
    defaultPort,
    limiter: () => limiter,
    idleMs: IDLE_MS,
  });
  const agents = {
    http: new PoliteHttpAgent(polite(80), agentOptions),
    https: new PoliteHttpsAgent(polite(443), {
      ...agentOptions,
      ...(secureContext !== undefined ? { secureContext } : {}),
    }),
  };
  limiter = new ConnectionLimiter(options.perHostConnections, (host) =>
    closeIdleConnection([agents.http, agents.https], host),
  );
  const gate = new HostGate(options, undefined, options.shared ?? null);
  return {
    settings: {
      lookup: cachedLookup(base),
      // Wildcard --resolve entries cover names a library chooses: only exact ones are trusted.
      policy: { allowPrivate: options.allowPrivate, trustedNames: trustedResolveNames(resolveMap) },
      ca: undefined,
      timeoutMs: options.timeoutMs,
      maxBodyBytes: options.maxBodyBytes,
      agents,
      gate: (url) => gate.acquire(url.hostname),
      userAgent: SWEEP_USER_AGENT,
    },
    gate,
    close: () => {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
