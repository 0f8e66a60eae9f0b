/**
 * HTTPS-first's exemptions as Chromium rules, generated from the table decide() reads
 * (site-rules/local-names.ts): `allow` for main frames of local names and addresses, just above
 * HTTPS-first's upgrade. Every regex is anchored at the scheme and reads the whole authority
 * (credentials skipped, the host delimited by the port or the path), so no other part of a URL
 * can satisfy it. One pattern per rule: Chromium refuses a regex over 2 KB of RE2 program.
 */
import type { DnrCondition } from '@httpsify/engine/dnr';
import {
  blockRange,
  LOCAL_DOMAINS,
  LOCAL_IPV4,
  LOCAL_IPV6_EXACT,
  LOCAL_IPV6_FIRST_HEXTET,
  SINGLE_LABEL_IS_LOCAL,
} from '../site-rules/local-names.js';
import { numberRangeRegex } from './number-ranges.js';

/** `http://`, then any credentials (everything up to the authority's last `@`). */
export const HTTP_AUTHORITY_START = '^http://(?:[^/?#]*@)?';
/** After the host: an optional port, then the path every http:// URL has. */
const PORT_END = '(?::[0-9]+)?/';

const escape = (s: string): string => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** The four octets of an IPv4 block as regex text. */
function ipv4Block(base: number, bits: number): string {
  const octets: string[] = [];
  for (let i = 0; i < 4; i++) {
    const shift = 8 * (3 - i);
    const fixedBits = Math.max(0, Math.min(8, bits - 8 * i));
    const value = Math.floor(base / 2 ** shift) % 256;
    if (fixedBits === 0) octets.push('[0-9]+');
    else {
      const [lo, hi] = blockRange(value, fixedBits, 8);
      octets.push(numberRangeRegex(lo, hi, 10));
    }
  }
  return octets.join('\\.');
}

/**
 * The table's IPv4 blocks as the URL parser writes them mapped into IPv6 (`::ffff:c0a8:1`):
 * blocks of up to 16 bits share one pattern for the low group.
 */
function ipv4MappedBlocks(): string {
  const wide: string[] = [];
  const narrow: string[] = [];
  for (const [base, bits] of LOCAL_IPV4) {
    const [hlo, hhi] = blockRange(Math.floor(base / 65536), Math.min(16, bits), 16);
    const high = numberRangeRegex(hlo, hhi, 16);
    if (bits <= 16) wide.push(high);
    else {
      const [llo, lhi] = blockRange(base % 65536, bits - 16, 16);
      narrow.push(`${high}:${numberRangeRegex(llo, lhi, 16)}`);
    }
  }
  const alts = [...(wide.length > 0 ? [`(?:${wide.join('|')}):[0-9a-f]{1,4}`] : []), ...narrow];
  return `::ffff:(?:${alts.join('|')})`;
}

/** The regexes of the table, one rule each. */
export function localNameRegexes(): string[] {
  const out: string[] = [];
  if (SINGLE_LABEL_IS_LOCAL) out.push(`${HTTP_AUTHORITY_START}[^./:@[\\]]+\\.*${PORT_END}`);
  for (const [base, bits] of LOCAL_IPV4)
    out.push(`${HTTP_AUTHORITY_START}${ipv4Block(base, bits)}${PORT_END}`);
  out.push(`${HTTP_AUTHORITY_START}\\[(?:${LOCAL_IPV6_EXACT.map(escape).join('|')})\\]${PORT_END}`);
  for (const [base, bits] of LOCAL_IPV6_FIRST_HEXTET) {
    const [lo, hi] = blockRange(base, bits, 16);
    out.push(`${HTTP_AUTHORITY_START}\\[${numberRangeRegex(lo, hi, 16)}:[0-9a-f:]*\\]${PORT_END}`);
  }
  out.push(`${HTTP_AUTHORITY_START}\\[${ipv4MappedBlocks()}\\]${PORT_END}`);
  return out;
}

/** Every condition of the exemptions (main frames only; the caller adds priority and action). */
export function localNameConditions(): DnrCondition[] {
  return [
    ...localNameRegexes().map((regexFilter): DnrCondition => ({
      regexFilter,
      resourceTypes: ['main_frame'],
    })),
    // requestDomains is the request's own host: the name and every name under it.
    { requestDomains: [...LOCAL_DOMAINS], resourceTypes: ['main_frame'] },
  ];
}
