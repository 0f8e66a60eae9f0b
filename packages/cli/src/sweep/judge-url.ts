import type { ChainOutcome } from '../fetch-test/follow-redirects.js';
import { looksLikeHtml } from '../fetch-test/page-structure.js';
import { contentSimilarity, SIMILARITY_THRESHOLD } from '../links/content-similarity.js';
import { httpSubresources } from './mixed-content.js';
import type { UrlVerdict } from './verdicts.js';

export interface Judgement {
  verdict: UrlVerdict;
  detail: string;
  similarity: number | null;
}

const is2xx = (s: number | null): boolean => s !== null && s >= 200 && s < 300;

/** Which certificate problem a TLS failure message names (Node's error codes). */
function tlsVerdict(message: string): UrlVerdict {
  if (/CERT_HAS_EXPIRED|CERT_NOT_YET_VALID/.test(message)) return 'cert-expired';
  if (/ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH|does not match certificate/i.test(message))
    return 'cert-wrong-name';
  if (
    /SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|CERT_UNTRUSTED|CERT_SIGNATURE_FAILURE|CERT_REJECTED|INVALID_CA/.test(
      message,
    )
  )
    return 'cert-untrusted';
  return 'tls-error';
}

/**
 * The verdict for one URL from its plain fetch and its HTTPS fetch (through the rewrite). The
 * HTTPS side is judged first where the plain side does not matter (a certificate problem is
 * one whatever HTTP does); a dead plain site makes the rest unjudgeable.
 */
export function judgeUrl(plain: ChainOutcome, secure: ChainOutcome): Judgement {
  const j = (verdict: UrlVerdict, detail: string, similarity: number | null = null): Judgement => ({
    verdict,
    detail,
    similarity,
  });
  const f = secure.failure;
  // A URL the outbound policy refused was never fetched: nothing to judge, on either side.
  if (f?.kind === 'not-public') return j('not-public', f.message);
  if (plain.failure?.kind === 'not-public') return j('not-public', plain.failure.message);
  if (f !== undefined) {
    if (f.kind === 'tls') return j(tlsVerdict(f.message), f.message);
    if (f.kind === 'redirect-loop' || f.kind === 'too-many-redirects')
      return j('redirect-loop', f.message);
    if (f.kind === 'timeout') return j('timeout', f.message);
    if (f.kind === 'connect') return j('refused', f.message);
    // However long the resolver took: the HTTPS URL's host does not resolve.
    if (f.kind === 'dns') return j('host-gone', f.message);
    return j('tls-error', f.message);
  }
  if (!/^https:/i.test(secure.finalUrl))
    return j('https-to-http', `the HTTPS fetch ends on ${secure.finalUrl}`);
  if (plain.failure !== undefined) {
    if (plain.failure.kind === 'dns' && plain.hops.length === 0)
      return j('host-gone', plain.failure.message);
    return j('http-broken', `plain HTTP failed: ${plain.failure.message}`);
  }
  if (is2xx(plain.status) && !is2xx(secure.status))
    return j('https-status', `HTTPS answered ${secure.status} where HTTP answered ${plain.status}`);
  let similarity: number | null = null;
  if (is2xx(plain.status) && is2xx(secure.status)) {
    similarity = contentSimilarity(plain, secure);
    if (similarity < SIMILARITY_THRESHOLD)
      return j(
        'content-differs',
        `similarity ${similarity.toFixed(2)}, needs ${SIMILARITY_THRESHOLD}`,
        similarity,
      );
  }
  if (looksLikeHtml(secure.contentType, secure.body)) {
    const mixed = httpSubresources(secure.body);
    if (mixed.length > 0) return j('mixed-content', `loads ${mixed.join(' ')}`, similarity);
  }
  return j('works', `HTTP ${plain.status}, HTTPS ${secure.status}`, similarity);
}
