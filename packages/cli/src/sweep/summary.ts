import { readFileSync } from 'node:fs';
import { readResults } from './journal.js';
import {
  severityOf,
  URL_VERDICTS,
  VERDICT_WORDS,
  type Severity,
  type UrlVerdict,
} from './verdicts.js';

/** One ruleset's health over its swept URLs. */
export interface RulesetHealth {
  name: string;
  file: string;
  /** failing if any URL fails; else warning if any warns; ok if some URL works; else unknown. */
  health: Severity;
  urls: number;
  failingUrls: number;
  /** Distinct problems, worst first: verdict words and one example URL each. */
  reasons: string[];
  verdicts: Partial<Record<UrlVerdict, number>>;
}

export interface SweepSummary {
  format: 'httpsify-sweep-summary/1';
  kind: 'ruleset' | 'discover';
  /** First and last result times (ms since the epoch). */
  startedAt: number;
  finishedAt: number;
  urls: number;
  byVerdict: Record<UrlVerdict, number>;
  byHealth: Record<Severity, number>;
  rulesets: RulesetHealth[];
}

const RANK: Record<Severity, number> = { failing: 3, warning: 2, ok: 1, unknown: 0 };

/** Reads a JSONL journal into a summary; holds one entry per ruleset, not per URL. */
export async function summarize(resultsPath: string): Promise<SweepSummary> {
  const byVerdict = Object.fromEntries(URL_VERDICTS.map((v) => [v, 0])) as Record<
    UrlVerdict,
    number
  >;
  const rulesets = new Map<string, RulesetHealth & { examples: Map<UrlVerdict, string> }>();
  let startedAt = Infinity;
  let finishedAt = 0;
  let urls = 0;
  let kind: SweepSummary['kind'] = 'ruleset';
  for await (const r of readResults(resultsPath)) {
    if (!(r.verdict in byVerdict)) continue;
    urls++;
    kind = r.kind;
    byVerdict[r.verdict]++;
    startedAt = Math.min(startedAt, r.at - r.ms);
    finishedAt = Math.max(finishedAt, r.at);
    const id = r.file !== '' ? r.file : r.ruleset;
    let h = rulesets.get(id);
    if (h === undefined) {
      h = {
        name: r.ruleset,
        file: r.file,
        health: 'unknown',
        urls: 0,
        failingUrls: 0,
        reasons: [],
        verdicts: {},
        examples: new Map(),
      };
      rulesets.set(id, h);
    }
    h.urls++;
    h.verdicts[r.verdict] = (h.verdicts[r.verdict] ?? 0) + 1;
    const sev = severityOf(r.verdict);
    if (sev === 'failing') h.failingUrls++;
    if (RANK[sev] > RANK[h.health]) h.health = sev;
    if (sev !== 'ok' && !h.examples.has(r.verdict))
      h.examples.set(r.verdict, `${VERDICT_WORDS[r.verdict]}: ${r.url} (${r.detail})`);
  }
  const list: RulesetHealth[] = [];
  const byHealth: Record<Severity, number> = { ok: 0, warning: 0, failing: 0, unknown: 0 };
  for (const h of rulesets.values()) {
    const reasons = [...h.examples.entries()]
      .sort((a, b) => RANK[severityOf(b[0])] - RANK[severityOf(a[0])])
      .map(([, text]) => text);
    const { examples: _examples, ...rest } = h;
    list.push({ ...rest, reasons });
    byHealth[h.health]++;
  }
  list.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.name < b.name ? -1 : 1));
  return {
    format: 'httpsify-sweep-summary/1',
    kind,
    startedAt: urls > 0 ? startedAt : 0,
    finishedAt,
    urls,
    byVerdict,
    byHealth,
    rulesets: list,
  };
}

/** Reads a summary.json from an earlier sweep; a file that is not one is an error naming it. */
export function readSummary(path: string): SweepSummary {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path}: cannot read the previous sweep's summary: ${(err as Error).message}`);
  }
  const s = value as Partial<SweepSummary>;
  if (
    s.format !== 'httpsify-sweep-summary/1' ||
    !Array.isArray(s.rulesets) ||
    typeof s.finishedAt !== 'number'
  ) {
    throw new Error(`${path}: not a sweep summary (expected "format": "httpsify-sweep-summary/1")`);
  }
  return s as SweepSummary;
}

export interface SweepDiff {
  /** Rulesets whose health changed: [id, before, after]. */
  changed: {
    name: string;
    file: string;
    before: Severity | 'absent';
    after: Severity | 'absent';
  }[];
}

/** What changed since the previous sweep, ruleset by ruleset. */
export function diffSummaries(previous: SweepSummary, current: SweepSummary): SweepDiff {
  const id = (h: RulesetHealth): string => (h.file !== '' ? h.file : h.name);
  const before = new Map(previous.rulesets.map((h) => [id(h), h]));
  const changed: SweepDiff['changed'] = [];
  for (const h of current.rulesets) {
    const p = before.get(id(h));
    before.delete(id(h));
    if (p === undefined || p.health !== h.health)
      changed.push({ name: h.name, file: h.file, before: p?.health ?? 'absent', after: h.health });
  }
  for (const p of before.values())
    changed.push({ name: p.name, file: p.file, before: p.health, after: 'absent' });
  return { changed };
}
