/**
 * What one swept URL showed. `works`, `http-broken` (the plain site itself is down, so the
 * ruleset cannot be judged) and `not-public` (the outbound policy refused to fetch a loopback,
 * private or link-local address) never fail a ruleset; `mixed-content` warns; the rest fail it.
 */
export const URL_VERDICTS = [
  'works',
  'refused',
  'timeout',
  'cert-expired',
  'cert-wrong-name',
  'cert-untrusted',
  'tls-error',
  'https-status',
  'content-differs',
  'redirect-loop',
  'https-to-http',
  'mixed-content',
  'host-gone',
  'no-rewrite',
  'http-broken',
  'not-public',
] as const;

export type UrlVerdict = (typeof URL_VERDICTS)[number];

/** Plain words for people reading the report. */
export const VERDICT_WORDS: Record<UrlVerdict, string> = {
  works: 'works',
  refused: 'HTTPS refused',
  timeout: 'HTTPS timed out',
  'cert-expired': 'certificate expired',
  'cert-wrong-name': 'certificate for another name',
  'cert-untrusted': 'certificate not trusted',
  'tls-error': 'TLS error',
  'https-status': 'HTTPS answers an error',
  'content-differs': 'content differs',
  'redirect-loop': 'redirect loop',
  'https-to-http': 'HTTPS redirects to HTTP',
  'mixed-content': 'loads HTTP subresources',
  'host-gone': 'host does not resolve',
  'no-rewrite': 'ruleset does not rewrite its test',
  'http-broken': 'HTTP site down (not judged)',
  'not-public': 'private address (not fetched)',
};

export type Severity = 'ok' | 'warning' | 'failing' | 'unknown';

export function severityOf(verdict: UrlVerdict): Severity {
  if (verdict === 'works') return 'ok';
  if (verdict === 'mixed-content') return 'warning';
  if (verdict === 'http-broken' || verdict === 'not-public') return 'unknown';
  return 'failing';
}

/** One line of the JSONL journal: the job, and everything the sweep learned about its URL. */
export interface SweepResult extends Omit<SweepJob, 'problem'> {
  verdict: UrlVerdict;
  detail: string;
  plainStatus: number | null;
  secureStatus: number | null;
  similarity: number | null;
  /** When the result was made (ms since the epoch) and how long it took. */
  at: number;
  ms: number;
}

/** One unit of work, small enough to travel through a queue as JSON. */
export interface SweepJob {
  /** Identity of the job: `kind|ruleset|url` (rulesets) or `host|name` (discovery). */
  key: string;
  kind: 'ruleset' | 'discover';
  ruleset: string;
  file: string;
  url: string;
  /** The ruleset's own rewrite of `url`; null when it rewrites nothing (no fetch). */
  rewritten: string | null;
  problem?: string;
}
