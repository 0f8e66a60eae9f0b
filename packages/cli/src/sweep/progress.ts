import { barText } from '../shared/progress.js';

/** Formats seconds as 1h02m, 3m05s or 12s. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s >= 3600)
    return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/**
 * Sweep progress: on a terminal a bar redrawn at most 5 times a second with the rate and the
 * time left; elsewhere (CI, pipes) one plain line every `lineEveryMs`.
 */
export class SweepProgress {
  private done = 0;
  private readonly started = Date.now();
  private lastDraw = 0;
  private shown = false;
  private readonly tty: boolean;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private total: number,
    /** Already done before this run (a resumed sweep): counted, but not in the rate. */
    private readonly already = 0,
    private readonly lineEveryMs = 10_000,
  ) {
    this.tty = stream.isTTY === true;
  }

  setTotal(total: number): void {
    this.total = total;
  }

  tick(n = 1): void {
    this.done += n;
    const now = Date.now();
    if (now - this.lastDraw < (this.tty ? 200 : this.lineEveryMs)) return;
    this.lastDraw = now;
    this.draw();
  }

  line(): string {
    const elapsed = (Date.now() - this.started) / 1000;
    const rate = elapsed > 0 ? this.done / elapsed : 0;
    const count = this.already + this.done;
    const left = this.total - count;
    const pct = this.total > 0 ? Math.floor((count / this.total) * 100) : 0;
    return `${count}/${this.total} URLs (${pct}%), ${rate.toFixed(1)}/s, ETA ${rate > 0 ? duration(left / rate) : '?'}`;
  }

  private draw(): void {
    if (!this.tty) {
      this.stream.write(`sweep: ${this.line()}\n`);
      return;
    }
    const width = Math.max(10, Math.min(30, (this.stream.columns ?? 80) - 50));
    const count = this.already + this.done;
    this.stream.write(`\r\x1b[K${barText(count, this.total, width)} ${this.line()}`);
    this.shown = true;
  }

  clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }

  finish(): void {
    this.clear();
    this.stream.write(
      `sweep: ${this.line()}, done in ${duration((Date.now() - this.started) / 1000)}\n`,
    );
  }
}
