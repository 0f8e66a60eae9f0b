/**
 * A one-line progress bar on a terminal stream. Printing other output goes through `clear()`
 * first, so the bar never ends up in the middle of a report line. Silent on non-TTYs (CI logs,
 * pipes), where carriage returns would only add noise.
 */
export class ProgressBar {
  private done = 0;
  private shown = false;
  private readonly enabled: boolean;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly total: number,
    private readonly label = 'URLs',
  ) {
    this.enabled = stream.isTTY === true && total > 0;
  }

  tick(): void {
    this.done++;
    this.render();
  }

  render(): void {
    if (!this.enabled) return;
    const width = Math.max(10, Math.min(40, (this.stream.columns ?? 80) - 30));
    const filled = Math.round((this.done / this.total) * width);
    this.stream.write(
      `\r\x1b[K[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${this.done}/${this.total} ${this.label}`,
    );
    this.shown = true;
  }

  clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}
