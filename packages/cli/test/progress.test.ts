import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corpusSubsetDir } from '../../engine/test/support/corpus.js';
import { runCliSync } from './support/run-cli.js';

/** Runs the CLI with HTTPSIFY_PROGRESS as given (or unset, as on a plain run). */
function run(args: string[], env: Record<string, string> = {}) {
  return runCliSync(args, { env: { HTTPSIFY_PROGRESS: undefined, ...env } });
}

/**
 * What a terminal shows once the stream has been written to it: `\r` goes back to the start of
 * the line and ESC[K erases the rest of it. A bar that is cleared leaves nothing behind.
 */
function onScreen(stream: string): string {
  const lines: string[] = [];
  let line = '';
  for (let i = 0; i < stream.length; i++) {
    const c = stream[i];
    if (c === '\r') line = '';
    else if (stream.startsWith('\x1b[K', i)) i += 2;
    else if (c === '\n') {
      lines.push(line);
      line = '';
    } else line += c;
  }
  return [...lines, line].join('\n');
}

/** check prints how long it took, compile the file it wrote; nothing else depends on the run. */
const untimed = (s: string) =>
  s.replace(/ in \d+\.\d s /, ' in N s ').replace(/(quiet|forced|flagged|refused)\.bundle/, 'X');

describe('progress on long work (compile, dnr, check, test)', () => {
  // 1 ruleset in 100 of the corpus: real files, a few hundred of them.
  const rules = corpusSubsetDir(100);
  const out = mkdtempSync(join(tmpdir(), 'httpsify-progress-'));
  const cases: { name: string; args: string[]; label: RegExp; file?: string }[] = [
    {
      name: 'compile',
      args: ['compile', '--rules', rules, '-o', join(out, 'PLACE.bundle')],
      label: /\] \d+\/\d+ rulesets read/,
      file: 'PLACE.bundle',
    },
    {
      name: 'dnr',
      args: ['dnr', '--rules', rules],
      label: /\] \d+\/\d+ rulesets planned as DNR rules/,
    },
    {
      name: 'check',
      args: ['check', rules, '--counts', '--no-baseline', '--no-config'],
      label: /\] \d+\/\d+ files checked/,
    },
    {
      name: 'test',
      args: ['test', rules, '--format', 'sarif', '--no-baseline', '--no-config'],
      label: /\] \d+\/\d+ rulesets tested/,
    },
  ];

  for (const c of cases) {
    it(`${c.name}: a bar on stderr when asked for, the same stdout and screen either way`, () => {
      const argsFor = (tag: string) => c.args.map((a) => a.replace('PLACE', tag));
      const quiet = run(argsFor('quiet'));
      const forced = run(argsFor('forced'), { HTTPSIFY_PROGRESS: '1' });
      const flagged = run([...argsFor('flagged'), '--progress']);
      const refused = run([...argsFor('refused'), '--no-progress'], { HTTPSIFY_PROGRESS: '1' });
      // check and test find errors in real rulesets (exit 1): the same status either way.
      expect([0, 1]).toContain(quiet.status);
      for (const r of [forced, flagged, refused]) expect(r.status, r.stderr).toBe(quiet.status);

      // Not a terminal: no bar, no carriage return, unless asked for.
      expect(quiet.stderr).not.toContain('\r');
      expect(untimed(refused.stderr)).toBe(untimed(quiet.stderr));
      for (const r of [forced, flagged]) {
        expect(r.stderr).toMatch(c.label);
        expect(r.stderr).toContain('\r\x1b[K[');
        // The report is the same bytes, and the bar leaves nothing on the screen.
        expect(r.stdout).toBe(quiet.stdout);
        expect(untimed(onScreen(r.stderr))).toBe(untimed(quiet.stderr));
      }
      if (c.file !== undefined) {
        const bytes = readFileSync(join(out, c.file.replace('PLACE', 'quiet')));
        expect(readFileSync(join(out, c.file.replace('PLACE', 'forced')))).toEqual(bytes);
      }
    });
  }
});
