import { followRedirects, type ChainOutcome } from '../fetch-test/follow-redirects.js';
import type { RequestSettings } from '../fetch-test/single-request.js';
import { contentSimilarity, SIMILARITY_THRESHOLD } from './content-similarity.js';

export interface Verdict {
  verified: boolean;
  /** Why the rewrite is not kept (or, when verified, a short note of what matched). */
  reason: string;
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
};

/**
 * Judges whether `secure` can replace `plain`: both answered, with the same status, ending on
 * the same host (redirects followed), the HTTPS side did not end on http://, and the content is
 * similar (`contentSimilarity` >= SIMILARITY_THRESHOLD).
 */
export function judge(plain: ChainOutcome, secure: ChainOutcome): Verdict {
  if (secure.failure !== undefined)
    return { verified: false, reason: `the https URL failed: ${secure.failure.message}` };
  if (plain.failure !== undefined)
    return {
      verified: false,
      reason: `the http URL failed, so there is nothing to compare with: ${plain.failure.message}`,
    };
  if (!/^https:/i.test(secure.finalUrl))
    return {
      verified: false,
      reason: `the https URL redirects back to plain HTTP: ${secure.finalUrl}`,
    };
  if (plain.status !== secure.status)
    return {
      verified: false,
      reason: `HTTPS answered ${secure.status} where HTTP answered ${plain.status}`,
    };
  const plainHost = hostOf(plain.finalUrl);
  const secureHost = hostOf(secure.finalUrl);
  if (plainHost !== secureHost)
    return {
      verified: false,
      reason: `HTTPS ends on ${secureHost} where HTTP ends on ${plainHost}`,
    };
  const similarity = contentSimilarity(plain, secure);
  if (similarity < SIMILARITY_THRESHOLD)
    return {
      verified: false,
      reason: `the content differs (similarity ${similarity.toFixed(2)}, needs ${SIMILARITY_THRESHOLD})`,
    };
  return {
    verified: true,
    reason: `same status ${secure.status}, same host, similarity ${similarity.toFixed(2)}`,
  };
}

/**
 * Fetches each (http, https) pair once, `concurrency` pairs at a time, redirects followed as
 * they come, and judges it. `onDone` is called as each pair finishes (progress display).
 */
export async function verifyPairs(
  pairs: readonly { url: string; rewritten: string }[],
  settings: RequestSettings,
  concurrency: number,
  onDone: () => void = () => undefined,
): Promise<Map<string, Verdict>> {
  const verdicts = new Map<string, Verdict>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pairs.length) {
      const pair = pairs[next++] as { url: string; rewritten: string };
      const [plain, secure] = await Promise.all([
        followRedirects(pair.url, settings),
        followRedirects(pair.rewritten, settings),
      ]);
      verdicts.set(pairKey(pair.url, pair.rewritten), judge(plain, secure));
      onDone();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, pairs.length) }, worker));
  return verdicts;
}

export const pairKey = (url: string, rewritten: string): string => `${url}\n${rewritten}`;
