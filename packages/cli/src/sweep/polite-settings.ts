import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { rootCertificates } from 'node:tls';
import { lookupWithOverrides, parseResolveOptions, type LookupFunction } from '../fetch-test/resolve-option.js';
import type { RequestSettings } from '../fetch-test/single-request.js';
import { cachedLookup } from './dns-cache.js';
import { HostGate, type PolitenessLimits } from './host-gate.js';

export const SWEEP_USER_AGENT = 'httpsify-sweep/0.1 (HTTPS Everywhere ruleset health check by httpsify)';

export interface SweepRequestOptions extends PolitenessLimits {
  timeoutMs: number;
  maxBodyBytes: number;
  resolve: readonly string[];
  caFiles: readonly string[];
  /** Replaces name resolution altogether (the tests' local web). */
  lookup?: LookupFunction;
  /** Connect to another port than the URL's (`--connect-to 443:8443`): a local test web, a proxy. */
  connectPorts?: ReadonlyMap<number, number>;
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

/** Keep-alive agents that connect to a mapped port; pools stay keyed by the URL's host and port. */
class PortMappingHttpAgent extends HttpAgent {
  constructor(
    private readonly ports: ReadonlyMap<number, number>,
    private readonly defaultPort: number,
    options: ConstructorParameters<typeof HttpAgent>[0],
  ) {
    super(options);
  }

  override createConnection(
    options: HttpConnectionOptions,
    callback?: Parameters<HttpAgent['createConnection']>[1],
  ): ReturnType<HttpAgent['createConnection']> {
    return super.createConnection({ ...options, port: mapped(this.ports, this.defaultPort, options.port) }, callback);
  }
}

class PortMappingHttpsAgent extends HttpsAgent {
  constructor(
    private readonly ports: ReadonlyMap<number, number>,
    private readonly defaultPort: number,
    options: ConstructorParameters<typeof HttpsAgent>[0],
  ) {
    super(options);
  }

  override createConnection(
    options: HttpsConnectionOptions,
    callback?: Parameters<HttpsAgent['createConnection']>[1],
  ): ReturnType<HttpsAgent['createConnection']> {
    return super.createConnection({ ...options, port: mapped(this.ports, this.defaultPort, options.port) }, callback);
  }
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
        if (address !== undefined) return lookupWithOverrides(new Map([[name, address]]))(name, options, callback);
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
    if (m === null || from < 1 || from > 65535 || to < 1 || to > 65535) throw new Error(`--connect-to ${JSON.stringify(v)}: expected PORT:PORT, e.g. 443:8443`);
    map.set(from, to);
  }
  return map;
}

/**
 * Request settings for a sweep: keep-alive agents (one pool per host, as wide as the per-host
 * limit), a DNS cache in front of the resolver, the politeness gate, and a User-Agent that
 * says who is asking. Extra CAs go into one shared TLS context, so connection pool names stay
 * short (an explicit `ca` list would be part of every pool's name).
 */
export function sweepClient(options: SweepRequestOptions): SweepClient {
  const extraCa = options.caFiles.map((file) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`--ca ${file}: cannot read: ${(err as Error).message}`);
    }
  });
  const base = options.lookup ?? wildcardLookup(parseResolveOptions(options.resolve));
  const agentOptions = {
    keepAlive: true,
    maxSockets: options.perHostConnections,
    maxFreeSockets: options.perHostConnections,
    timeout: options.timeoutMs,
    scheduling: 'lifo' as const,
  };
  const secureContext = extraCa.length > 0 ? createSecureContext({ ca: [...rootCertificates, ...extraCa] }) : undefined;
  const ports = options.connectPorts ?? new Map<number, number>();
  const agents = {
    http: new PortMappingHttpAgent(ports, 80, agentOptions),
    https: new PortMappingHttpsAgent(ports, 443, { ...agentOptions, ...(secureContext !== undefined ? { secureContext } : {}) }),
  };
  const gate = new HostGate(options);
  return {
    settings: {
      lookup: cachedLookup(base),
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
