import { URL_VERDICTS, type SweepJob, type SweepResult, type UrlVerdict } from '../verdicts.js';

/**
 * What comes back from Redis is not trusted: anyone who can write to the instance (a broken or
 * hostile worker, another client) can put anything there. A stored result contributes only what
 * a worker measured, each field checked for type and size; which ruleset, file and URL it
 * belongs to always comes from the coordinator's own job, derived from its own library.
 */

/** A stored result longer than this is refused unread. */
export const MAX_STORED_RESULT_BYTES = 64 * 1024;
const MAX_DETAIL_CHARS = 4096;
const MAX_JOB_FIELD_CHARS = 8192;

const VERDICTS = new Set<string>(URL_VERDICTS);
const isStatus = (v: unknown): v is number | null =>
  v === null || (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 999);
const isTime = (v: unknown): v is number =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1e15;

/**
 * The result for `job` from a stored JSON text, or why it is refused. Only verdict, detail,
 * statuses, similarity and times are read from the text.
 */
export function trustedResult(job: SweepJob, stored: string): SweepResult | { refused: string } {
  if (stored.length > MAX_STORED_RESULT_BYTES)
    return { refused: `stored result of ${stored.length} bytes` };
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return { refused: 'stored result is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { refused: 'stored result is not an object' };
  const v = value as Record<string, unknown>;
  if (v.key !== job.key) return { refused: 'stored result names another URL' };
  if (typeof v.verdict !== 'string' || !VERDICTS.has(v.verdict))
    return { refused: 'unknown verdict' };
  if (typeof v.detail !== 'string' || v.detail.length > MAX_DETAIL_CHARS)
    return { refused: 'detail missing or too long' };
  if (!isStatus(v.plainStatus) || !isStatus(v.secureStatus)) return { refused: 'bad status' };
  const similarity = v.similarity;
  if (
    similarity !== null &&
    !(typeof similarity === 'number' && similarity >= 0 && similarity <= 1)
  )
    return { refused: 'bad similarity' };
  if (!isTime(v.at) || !isTime(v.ms)) return { refused: 'bad times' };
  // A job with no rewrite is never fetched: its verdict is known without any worker.
  if (job.rewritten === null && v.verdict !== 'no-rewrite')
    return { refused: 'verdict for a URL that is not fetched' };
  return {
    key: job.key,
    kind: job.kind,
    ruleset: job.ruleset,
    file: job.file,
    url: job.url,
    rewritten: job.rewritten,
    verdict: v.verdict as UrlVerdict,
    detail: v.detail,
    plainStatus: v.plainStatus,
    secureStatus: v.secureStatus,
    similarity: similarity as number | null,
    at: v.at,
    ms: v.ms,
  };
}

const isText = (v: unknown, max = MAX_JOB_FIELD_CHARS): v is string =>
  typeof v === 'string' && v.length <= max;
const isWebUrl = (v: unknown): v is string => isText(v) && /^https?:\/\//i.test(v);

/**
 * A job as a worker reads it from the queue, or null: the fields a sweep uses, with their types
 * and sizes. (What a worker then fetches is judged by the outbound policy like any URL.)
 */
export function trustedJob(data: unknown): SweepJob | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  if (
    !isText(d.key) ||
    (d.kind !== 'ruleset' && d.kind !== 'discover') ||
    !isText(d.ruleset) ||
    !isText(d.file)
  )
    return null;
  if (!isWebUrl(d.url) || !(d.rewritten === null || isWebUrl(d.rewritten))) return null;
  if (d.problem !== undefined && !isText(d.problem)) return null;
  const job: SweepJob = {
    key: d.key,
    kind: d.kind,
    ruleset: d.ruleset,
    file: d.file,
    url: d.url,
    rewritten: d.rewritten,
  };
  if (d.problem !== undefined) job.problem = d.problem as string;
  return job;
}
