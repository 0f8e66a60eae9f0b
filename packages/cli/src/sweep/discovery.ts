import { createReadStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Engine } from '@httpsify/engine';
import { newRuleset } from '../authoring/new-ruleset.js';
import { readResults } from './journal.js';
import type { SweepJob } from './verdicts.js';

const HOST = /^(?:[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/;

/**
 * The host name a line of a host list names: a bare name, a URL (a browser history export),
 * or a CSV row whose last field is the name (top-sites lists: `rank,host`). Names are judged as
 * WHATWG URL parsing sees them. Returns null for blank and `#` comment lines, an error otherwise.
 */
export function hostOfLine(line: string): string | null | { error: string } {
  const text = line.trim();
  if (text === '' || text.startsWith('#')) return null;
  let candidate = text;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text) && text.includes(','))
    candidate = (text.split(',').pop() ?? '').trim().replace(/^"|"$/g, '');
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(candidate) ? candidate : `http://${candidate}/`)
      .hostname;
  } catch {
    return { error: `not a host name or URL: ${JSON.stringify(text.slice(0, 80))}` };
  }
  if (!HOST.test(host)) return { error: `not a public host name: ${JSON.stringify(host)}` };
  return host;
}

export interface DiscoveryCounts {
  covered: number;
  bad: number;
}

/**
 * Discovery jobs from a host list, streamed: each host no ruleset of the library rewrites
 * becomes one job comparing http://HOST/ with https://HOST/. Bad lines are reported with their
 * line number (through `onBad`) and counted, never silently dropped.
 */
export async function* discoveryJobs(
  listPath: string,
  library: Engine,
  counts: DiscoveryCounts,
  onBad: (message: string) => void,
): AsyncGenerator<SweepJob> {
  const lines = createInterface({ input: createReadStream(listPath, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    const host = hostOfLine(line);
    if (host === null) continue;
    if (typeof host === 'object') {
      counts.bad++;
      onBad(`${listPath}:${n}: ${host.error}`);
      continue;
    }
    const url = `http://${host}/`;
    if (library.rewrite(url) !== null) {
      counts.covered++;
      continue;
    }
    yield {
      key: `discover|${host}`,
      kind: 'discover',
      ruleset: host,
      file: '',
      url,
      rewritten: `https://${host}/`,
    };
  }
}

/**
 * Writes a simple ruleset (target, implied and explicit tests, the trivial rule) for every host
 * whose HTTPS answered 2xx with the same content; an existing file is never overwritten.
 */
export async function writeDiscoveredRulesets(
  resultsPath: string,
  outDir: string,
  date: string,
): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  for await (const r of readResults(resultsPath)) {
    if (
      r.kind !== 'discover' ||
      r.verdict !== 'works' ||
      r.secureStatus === null ||
      r.secureStatus < 200 ||
      r.secureStatus >= 300
    )
      continue;
    // Only a host name makes a file name here, and only a plain one inside outDir.
    if (typeof r.ruleset !== 'string' || !HOST.test(r.ruleset)) continue;
    const made = newRuleset(r.ruleset);
    if (basename(made.fileName) !== made.fileName || made.fileName.startsWith('.')) continue;
    const file = join(outDir, made.fileName);
    if (existsSync(file)) continue;
    const xml = made.xml.replace(
      'made by `httpsify new`.',
      `found by httpsify sweep (discovery): HTTPS served the same page on ${date}.`,
    );
    writeFileSync(file, xml, { flag: 'wx' });
    written.push(file);
  }
  return written;
}
