import { followRedirects, type ChainOutcome } from '../fetch-test/follow-redirects.js';
import type { RequestSettings } from '../fetch-test/single-request.js';
import { judgeUrl, type Judgement } from './judge-url.js';
import type { SweepJob, SweepResult } from './verdicts.js';

/** Worth a second HTTPS try (DuckDuckGo's crawler retries HTTPS once): the answer may be a blip. */
const retryable = (j: Judgement): boolean =>
  j.verdict === 'timeout' ||
  j.verdict === 'refused' ||
  (j.verdict === 'https-status' && /answered 5\d\d/.test(j.detail));

/**
 * Sweeps one job: the URL over plain HTTP as it is, and its rewrite over HTTPS with redirects
 * passed through `rewriteLocation` (the library's rulesets), then the judgement. Never throws
 * for what the web does: every network outcome becomes a verdict.
 */
export async function checkJob(
  job: SweepJob,
  settings: RequestSettings,
  rewriteLocation: (url: string) => string,
): Promise<SweepResult> {
  const started = Date.now();
  const base = {
    key: job.key,
    kind: job.kind,
    ruleset: job.ruleset,
    file: job.file,
    url: job.url,
    rewritten: job.rewritten,
  };
  if (job.rewritten === null) {
    return {
      ...base,
      verdict: 'no-rewrite',
      detail: job.problem ?? 'no rule rewrites this URL',
      plainStatus: null,
      secureStatus: null,
      similarity: null,
      at: Date.now(),
      ms: 0,
    };
  }
  const rewritten = job.rewritten;
  // An HTTPS page redirecting to http:// loops once the rulesets rewrite that back: the loop
  // is what a browser sees, the downgrade is why, and the verdict says so.
  let downgrade: string | null = null;
  const watch = (url: string): string => {
    if (downgrade === null && /^http:/i.test(url)) downgrade = url;
    return rewriteLocation(url);
  };
  const secureFetch = (): Promise<ChainOutcome> => {
    downgrade = null;
    return followRedirects(rewritten, settings, watch);
  };
  const [plain, first] = await Promise.all([followRedirects(job.url, settings), secureFetch()]);
  let secure: ChainOutcome = first;
  let judgement = judgeUrl(plain, secure);
  if (retryable(judgement)) {
    secure = await secureFetch();
    judgement = judgeUrl(plain, secure);
  }
  if (judgement.verdict === 'redirect-loop' && downgrade !== null)
    judgement = {
      ...judgement,
      verdict: 'https-to-http',
      detail: `HTTPS redirects to ${downgrade as string}; ${judgement.detail}`,
    };
  return {
    ...base,
    verdict: judgement.verdict,
    detail: judgement.detail,
    plainStatus: plain.status,
    secureStatus: secure.status,
    similarity: judgement.similarity,
    at: Date.now(),
    ms: Date.now() - started,
  };
}
