/**
 * The statistics the options page shows: upgrades, fallbacks and hosts last seen over HTTP.
 * Counted in memory and added to the stored totals in batches (one store write per flush).
 */
import type { Settings } from '../settings/schema.js';
import type { SettingsStore } from '../settings/store.js';

const STATS_FLUSH_MS = 2000;

export class Statistics {
  private upgrades = 0;
  private fallbacks = 0;
  private readonly httpHosts: string[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly store: Pick<SettingsStore, 'update'>,
    /** The totals as stored after a flush (what reads settings from memory must see them). */
    private readonly stored: (stats: Settings['stats']) => void = () => undefined,
  ) {}

  /** A request we moved to HTTPS. */
  upgraded(): void {
    this.upgrades++;
    this.flushSoon();
  }

  /** A failed HTTPS-first upgrade sent to the fallback page. */
  fellBack(): void {
    this.fallbacks++;
    this.flushSoon();
  }

  /** A page loaded over HTTP (host with port); the newest last. */
  servedOverHttp(hostWithPort: string): void {
    this.httpHosts.push(hostWithPort);
    this.flushSoon();
  }

  private flushSoon(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const batch = {
        upgrades: this.upgrades,
        fallbacks: this.fallbacks,
        httpHosts: this.httpHosts.splice(0),
      };
      this.upgrades = 0;
      this.fallbacks = 0;
      void this.store
        .update((s) => ({
          stats: {
            upgrades: s.stats.upgrades + batch.upgrades,
            fallbacks: s.stats.fallbacks + batch.fallbacks,
            httpHosts: [
              ...s.stats.httpHosts.filter((h) => !batch.httpHosts.includes(h)),
              ...batch.httpHosts,
            ],
          },
        }))
        .then((s) => this.stored(s.stats));
    }, STATS_FLUSH_MS);
  }
}
