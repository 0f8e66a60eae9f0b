/** Politeness limits: how hard the sweep may hit any one host, and the web as a whole. */
export interface PolitenessLimits {
  /** Requests in flight, and connections open, to one host name at once (both schemes). */
  perHostConnections: number;
  /** Milliseconds between the starts of two requests to the same host. */
  perHostDelayMs: number;
  /** Requests started per second over all hosts; 0 for no cap. */
  globalRate: number;
}

/**
 * The same limits held across processes (queue/host-leases.ts): resolves once this process may
 * start a request to `host` under the shared connection limit and start spacing, to the
 * function that gives the lease back.
 */
export interface SharedHostLimits {
  acquire(host: string): Promise<() => void>;
}

/** Host names as the politeness limits count them: case and trailing dots do not make a new host. */
export const hostKey = (host: string): string => host.toLowerCase().replace(/\.+$/, '');

/** Idle hosts are forgotten once this many are tracked (memory stays flat on long lists). */
const PRUNE_ABOVE = 2048;

interface HostState {
  active: number;
  lastStart: number;
  waiting: (() => void)[];
  startChain: Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Admits requests under the limits. Waiters are served in arrival order per host; idle hosts
 * are forgotten in batches, so memory follows the hosts in flight, not all hosts seen.
 */
export class HostGate {
  private readonly hosts = new Map<string, HostState>();
  private nextGlobalSlot = 0;

  constructor(
    private readonly limits: PolitenessLimits,
    private readonly now: () => number = () => Date.now(),
    private readonly shared: SharedHostLimits | null = null,
  ) {}

  /** Resolves when a request to `host` may start, to the function that says it ended. */
  async acquire(name: string): Promise<() => void> {
    const host = hostKey(name);
    let state = this.hosts.get(host);
    if (state === undefined) {
      state = { active: 0, lastStart: -Infinity, waiting: [], startChain: Promise.resolve() };
      this.hosts.set(host, state);
    }
    const s = state;
    // A released slot passes straight to the first waiter, so no newcomer can overtake it.
    if (s.active >= this.limits.perHostConnections || s.waiting.length > 0)
      await new Promise<void>((resolve) => s.waiting.push(resolve));
    else s.active++;
    // Starts to one host are chained: each waits for the one before it to start, then for the
    // delay measured from that real start (a late timer cannot squeeze the next gap).
    const started = s.startChain.then(async () => {
      const hostWait = s.lastStart + this.limits.perHostDelayMs - this.now();
      if (hostWait > 0) await sleep(hostWait);
      if (this.limits.globalRate > 0) {
        const at = Math.max(this.now(), this.nextGlobalSlot);
        this.nextGlobalSlot = at + 1000 / this.limits.globalRate;
        if (at > this.now()) await sleep(at - this.now());
      }
      s.lastStart = this.now();
    });
    s.startChain = started;
    await started;
    // Across processes: one lease per request in flight, granted in one atomic step with the
    // shared start spacing (the local spacing above only saves round trips).
    let giveBack: () => void = () => undefined;
    if (this.shared !== null) {
      try {
        giveBack = await this.shared.acquire(host);
      } catch (err) {
        this.release(s);
        throw err;
      }
      s.lastStart = this.now();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      giveBack();
      this.release(s);
    };
  }

  private release(s: HostState): void {
    const next = s.waiting.shift();
    if (next !== undefined) next();
    else s.active--;
    if (this.hosts.size > PRUNE_ABOVE) this.prune();
  }

  /** Forgets idle hosts whose delay has passed: they behave as never seen. */
  private prune(): void {
    const now = this.now();
    for (const [host, s] of this.hosts) {
      if (s.active === 0 && now - s.lastStart >= this.limits.perHostDelayMs)
        this.hosts.delete(host);
    }
  }

  /** Hosts with a request in flight or waiting (for tests and the bench). */
  get trackedHosts(): number {
    return this.hosts.size;
  }
}
