import type { Diagnostic } from '@httpsify/engine';
import { OUTBOUND_LIMITS } from '../net/outbound-policy.js';
import { checkUrl } from './check-url.js';
import type { ChainOutcome } from './follow-redirects.js';
import { loadForFetchTest } from './load-under-test.js';
import { requestSettings } from './request-settings.js';
import type { RequestSettings } from './single-request.js';
import { collectTestJobs, type TestJob } from './test-jobs.js';
import { verdictOf, type UrlResult } from './url-result.js';

export interface FetchTestOptions {
  /** Ruleset files or directories whose tests are fetched. */
  paths: readonly string[];
  /** More rulesets that only rewrite redirect targets (`--rules`). */
  rules?: readonly string[];
  concurrency?: number;
  timeoutMs?: number;
  /** `HOST:IP` pairs (`--resolve`). */
  resolve?: readonly string[];
  /** Extra trusted CA PEM files (`--ca`). */
  caFiles?: readonly string[];
  includeDefaultOff?: boolean;
  /** Also fetch loopback, private and link-local addresses (`--allow-private`; refused by default). */
  allowPrivate?: boolean;
  /** Called once with the number of URLs, then per URL in report order. */
  onStart?: (total: number) => void;
  onResult?: (result: UrlResult) => void;
  /** Called as each URL finishes, in completion order (progress display). */
  onProgress?: () => void;
}

export interface RulesetResult {
  name: string;
  file: string;
  verdict: 'ok' | 'failed' | 'skipped';
  fetched: number;
  failed: number;
  /** One line per failing URL: what went wrong. */
  reasons: string[];
}

export interface FetchTestReport {
  rulesets: RulesetResult[];
  urls: UrlResult[];
  skippedDefaultOff: number;
  excludedTests: number;
  diagnostics: Diagnostic[];
  failedRulesets: number;
}

export const DEFAULT_CONCURRENCY = 8;
export const DEFAULT_TIMEOUT_MS = OUTBOUND_LIMITS.timeoutMs;
const MAX_BODY_BYTES = OUTBOUND_LIMITS.maxBodyBytes;

/** The report keeps where each fetch went, not the page bodies. */
function withoutBody(chain: ChainOutcome | null): ChainOutcome | null {
  return chain === null ? null : { ...chain, body: '' };
}

async function runJob(
  job: TestJob,
  settings: RequestSettings,
  rewriteLocation: (url: string) => string,
): Promise<UrlResult> {
  const base = {
    ruleset: job.ruleset.name,
    file: job.ruleset.loc?.file ?? '',
    line: job.line,
    column: job.column,
    url: job.url,
    implicit: job.implicit,
    rewritten: job.rewritten,
  };
  if (job.rewritten === null) {
    const findings = [
      {
        severity: 'warning' as const,
        code: 'not-rewritten',
        message: `not fetched: ${job.problem ?? 'not rewritten'}`,
      },
    ];
    return { ...base, plain: null, secure: null, similarity: null, findings, verdict: 'skipped' };
  }
  const check = await checkUrl(job.url, job.rewritten, settings, rewriteLocation);
  return {
    ...base,
    plain: withoutBody(check.plain),
    secure: withoutBody(check.secure),
    similarity: check.similarity,
    findings: check.findings,
    verdict: verdictOf(check.findings, true),
  };
}

/** Fetches every non-excluded test URL of the rulesets under test, `concurrency` at a time. */
export async function runFetchTest(options: FetchTestOptions): Promise<FetchTestReport> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new Error(`--concurrency must be a positive integer, not ${concurrency}`);
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new Error(`--timeout must be a positive number of milliseconds, not ${timeoutMs}`);
  const settings = requestSettings({
    resolve: options.resolve ?? [],
    caFiles: options.caFiles ?? [],
    timeoutMs,
    maxBodyBytes: MAX_BODY_BYTES,
    allowPrivate: options.allowPrivate === true,
  });

  const loaded = loadForFetchTest(options.paths, options.rules ?? [], {
    includeDefaultOff: options.includeDefaultOff === true,
  });
  const { jobs, excluded } = collectTestJobs(loaded.tested, loaded.engine);
  const rewriteLocation = (url: string): string => loaded.engine.rewrite(url) ?? url;
  options.onStart?.(jobs.length);

  const results: (UrlResult | undefined)[] = new Array(jobs.length);
  let next = 0;
  let emitted = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await runJob(jobs[index]!, settings, rewriteLocation);
      options.onProgress?.();
      // Report in input order whatever prefix is complete, so output does not depend on timing.
      // (emitted++ stays outside the optional call: `f?.(x++)` skips x++ when f is absent.)
      while (emitted < results.length && results[emitted] !== undefined) {
        const done = results[emitted] as UrlResult;
        emitted++;
        options.onResult?.(done);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  const urls = results as UrlResult[];

  const rulesets: RulesetResult[] = loaded.tested.map((ruleset) => {
    const mine = urls.filter((_, i) => jobs[i]!.ruleset === ruleset);
    const failed = mine.filter((u) => u.verdict === 'failed');
    const reasons = failed.map(
      (u) =>
        `${u.url} => ${u.rewritten ?? '?'}: ${u.findings
          .filter((f) => f.severity === 'error')
          .map((f) => f.message)
          .join('; ')}`,
    );
    const fetched = mine.filter((u) => u.verdict !== 'skipped').length;
    return {
      name: ruleset.name,
      file: ruleset.loc?.file ?? '',
      verdict: failed.length > 0 ? 'failed' : fetched > 0 ? 'ok' : 'skipped',
      fetched,
      failed: failed.length,
      reasons,
    };
  });
  return {
    rulesets,
    urls,
    skippedDefaultOff: loaded.skippedDefaultOff.length,
    excludedTests: excluded,
    diagnostics: loaded.diagnostics,
    failedRulesets: rulesets.filter((r) => r.verdict === 'failed').length,
  };
}
