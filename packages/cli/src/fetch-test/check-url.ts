import { followRedirects, type ChainOutcome } from './follow-redirects.js';
import { pageSimilarity } from './page-structure.js';
import type { RequestSettings } from './single-request.js';
import { STRUCTURE_INFO_THRESHOLD, type Finding } from './url-result.js';

const is2xx = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

export interface UrlCheck {
  plain: ChainOutcome;
  secure: ChainOutcome | null;
  similarity: number | null;
  findings: Finding[];
}

/**
 * Fetches a test URL as it is (redirects followed as they come) and its rewritten form
 * (each redirect passed through `rewriteLocation`, the way the browser's rulesets would), then
 * judges the pair. Plain-side failures other than DNS only inform: a broken http site is not
 * the ruleset's fault.
 */
export async function checkUrl(
  url: string,
  rewritten: string,
  settings: RequestSettings,
  rewriteLocation: (url: string) => string,
): Promise<UrlCheck> {
  const findings: Finding[] = [];
  const plain = await followRedirects(url, settings);
  if (plain.failure?.kind === 'dns' && plain.hops.length === 0) {
    findings.push({
      severity: 'error',
      code: 'does-not-resolve',
      message: `test URL does not resolve: ${plain.failure.message}`,
    });
    return { plain, secure: null, similarity: null, findings };
  }
  if (plain.failure !== undefined)
    findings.push({
      severity: 'info',
      code: 'plain-failed',
      message: `plain HTTP fetch failed: ${plain.failure.message}`,
    });

  const secure = await followRedirects(rewritten, settings, rewriteLocation);
  if (secure.failure !== undefined) {
    findings.push({
      severity: 'error',
      code: `secure-${secure.failure.kind}`,
      message: secure.failure.message,
    });
    return { plain, secure, similarity: null, findings };
  }
  if (is2xx(plain.status) && !is2xx(secure.status)) {
    findings.push({
      severity: 'error',
      code: 'secure-status',
      message: `HTTPS answered ${secure.status} where HTTP answered ${plain.status}`,
    });
  }
  if (!secure.finalUrl.startsWith('https:')) {
    findings.push({
      severity: 'warning',
      code: 'secure-downgraded',
      message: `the HTTPS fetch was redirected to plain HTTP: ${secure.finalUrl}`,
    });
  }
  let similarity: number | null = null;
  if (is2xx(plain.status) && is2xx(secure.status)) {
    similarity = pageSimilarity(plain, secure);
    if (similarity !== null && similarity < STRUCTURE_INFO_THRESHOLD) {
      findings.push({
        severity: 'info',
        code: 'structure-differs',
        message: `page structure differs: similarity ${similarity.toFixed(2)}`,
      });
    }
  }
  return { plain, secure, similarity, findings };
}
