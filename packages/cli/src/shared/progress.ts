import type { Command } from './commander.js';

/**
 * Whether progress is drawn on `stream`: `--progress` / `--no-progress` when given, else the
 * HTTPSIFY_PROGRESS environment variable (1 or 0; how tests draw it through a pipe), else only
 * on a terminal. CI logs and pipes get no carriage returns by default.
 */
export function progressWanted(stream: NodeJS.WriteStream, flag?: boolean): boolean {
  if (flag !== undefined) return flag;
  const env = process.env.HTTPSIFY_PROGRESS;
  if (env === '1') return true;
  if (env === '0') return false;
  return stream.isTTY === true;
}

/** `--progress` and `--no-progress` on a command; neither given leaves the choice to progressWanted. */
export function addProgressOptions(command: Command): Command {
  return command
    .option('--progress', 'draw a progress bar on stderr even when it is not a terminal')
    .option('--no-progress', 'no progress bar, even on a terminal');
}

/** `[#####-----]`, `width` characters between the brackets. */
export function barText(done: number, total: number, width: number): string {
  const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/** Redraws of the bar are at least this far apart (the first and the last are always drawn). */
const REDRAW_MS = 100;

/**
 * A one-line progress bar on stderr. Printing other output goes through `clear()` first, so the
 * bar never ends up in the middle of a report line. Long work in several steps calls `phase()`
 * for each, with the step's own label and total.
 */
export class ProgressBar {
  private done = 0;
  private shown = false;
  private lastDraw = 0;
  private readonly enabled: boolean;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private total: number,
    private label = 'URLs',
    /** --progress / --no-progress, when given. */
    flag?: boolean,
  ) {
    this.enabled = progressWanted(stream, flag);
  }

  /** Starts the next step of the work at 0 of `total`; a total of 0 shows the label alone. */
  phase(label: string, total: number): void {
    this.label = label;
    this.total = total;
    this.done = 0;
    this.render();
  }

  tick(): void {
    this.done++;
    if (this.done >= this.total || Date.now() - this.lastDraw >= REDRAW_MS) this.render();
  }

  /**
   * A callback for work that reports its steps (the engine's loader and DNR compiler): each
   * step named in `labels` is a phase; a step reported once, as it starts, is named `once`.
   */
  steps<Step extends string>(
    labels: Record<Step, string>,
    once: readonly NoInfer<Step>[] = [],
  ): (step: Step, done: number, total: number) => void {
    let current: Step | null = null;
    return (step, done, total) => {
      if (step !== current) {
        current = step;
        this.phase(labels[step], once.includes(step) ? 0 : total);
      }
      if (once.includes(step)) return;
      this.total = total;
      this.done = done - 1;
      this.tick();
    };
  }

  render(): void {
    if (!this.enabled) return;
    this.lastDraw = Date.now();
    this.shown = true;
    if (this.total <= 0) {
      this.stream.write(`\r\x1b[K${this.label}...`);
      return;
    }
    const width = Math.max(10, Math.min(40, (this.stream.columns ?? 80) - 30));
    this.stream.write(
      `\r\x1b[K${barText(this.done, this.total, width)} ${this.done}/${this.total} ${this.label}`,
    );
  }

  clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}
