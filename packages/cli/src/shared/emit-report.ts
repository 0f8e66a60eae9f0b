import { writeReport } from './output-file.js';

/**
 * A command's formatters, one for each value its `--format` takes: pure functions of the report
 * (src/formats/), so the command decides what to report and never how it is spelled.
 */
export type Formatters<R, F extends string> = Readonly<Record<F, (report: R) => string>>;

/** What a command works out: the report, and its exit status (0 done, 1 problems, 2 could not run). */
export interface Outcome<R> {
  report: R;
  exitCode: 0 | 1 | 2;
}

/**
 * The one place a report leaves a command: the formatter `format` names renders it, and the text
 * goes to `outputFile` (its directories created) when one is given, else to `stream` (stdout).
 */
export async function emitReport<R, F extends string>(
  formatters: Formatters<R, F>,
  format: F,
  report: R,
  to: { outputFile?: string; stream?: NodeJS.WritableStream } = {},
): Promise<void> {
  await writeReport(formatters[format](report), to.outputFile, to.stream);
}

/** Raises the exit status to `code`: a worse status set earlier in the run is never lowered. */
export function raiseExitCode(code: number): void {
  if (code > Number(process.exitCode ?? 0)) process.exitCode = code;
}
