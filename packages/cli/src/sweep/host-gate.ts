/** Politeness limits: how hard the sweep may hit any one host, and the web as a whole. */
export interface PolitenessLimits {
  /** Requests in flight to one host at once. */
  perHostConnections: number;
  /** Milliseconds between the starts of two requests to the same host. */
  perHostDelayMs: number;
  /** Requests started per second over all hosts; 0 for no cap. */
  globalRate: number;
}

/** Idle hosts are forgotten once this many are tracked (memory stays flat on long lists). */
const PRUNE_ABOVE = 2048;

interface HostState {
  active: number;
  lastStart: number;
  waiting: (() => void)[];
}

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
  ) {}

  /** Resolves when a request to `host` may start, to the function that says it ended. */
  async acquire(host: string): Promise<() => void> {
    let state = this.hosts.get(host);
    if (state === undefined) {
      state = { active: 0, lastStart: -Infinity, waiting: [] };
      this.hosts.set(host, state);
    }
    const s = state;
    // A released slot passes straight to the first waiter, so no newcomer can overtake it.
    if (s.active >= this.limits.perHostConnections || s.waiting.length > 0) await new Promise<void>((resolve) => s.waiting.push(resolve));
    else s.active++;
    const hostWait = s.lastStart + this.limits.perHostDelayMs - this.now();
    s.lastStart = Math.max(this.now(), s.lastStart + this.limits.perHostDelayMs);
    let wait = Math.max(0, hostWait);
    if (this.limits.globalRate > 0) {
      const at = Math.max(this.now() + wait, this.nextGlobalSlot);
      this.nextGlobalSlot = at + 1000 / this.limits.globalRate;
      wait = at - this.now();
    }
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = s.waiting.shift();
      if (next !== undefined) next();
      else s.active--;
      if (this.hosts.size > PRUNE_ABOVE) this.prune();
    };
  }

  /** Forgets idle hosts whose delay has passed: they behave as never seen. */
  private prune(): void {
    const now = this.now();
    for (const [host, s] of this.hosts) {
      if (s.active === 0 && now - s.lastStart >= this.limits.perHostDelayMs) this.hosts.delete(host);
    }
  }

  /** Hosts with a request in flight or waiting (for tests and the bench). */
  get trackedHosts(): number {
    return this.hosts.size;
  }
}
