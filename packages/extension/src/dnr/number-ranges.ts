/**
 * Regex text for a range of numbers as URLs write them (no leading zeros): decimal IPv4 parts,
 * hexadecimal IPv6 groups. Used to turn the local-address table into DNR rules.
 */

const digit = (d: number, base: number): string => d.toString(base);

/** A class (or single digit) for digits lo..hi. */
function digitClass(lo: number, hi: number, base: number): string {
  if (lo === hi) return digit(lo, base);
  if (base === 16 && lo < 10 && hi >= 10) {
    const parts = [lo === 9 ? '9' : `${lo}-9`, hi === 10 ? 'a' : `a-${digit(hi, 16)}`];
    return `[${parts.join('')}]`;
  }
  return `[${digit(lo, base)}-${digit(hi, base)}]`;
}

/** Alternatives for every `width`-digit string (leading zeros allowed) from lo to hi. */
function fixedWidth(lo: number, hi: number, width: number, base: number): string[] {
  if (width === 1) return [digitClass(lo, hi, base)];
  const p = base ** (width - 1);
  const any = `${digitClass(0, base - 1, base)}${width - 1 > 1 ? `{${width - 1}}` : ''}`;
  if (lo === 0 && hi === base ** width - 1) return [`${digitClass(0, base - 1, base)}{${width}}`];
  const ld = Math.floor(lo / p);
  const hd = Math.floor(hi / p);
  const tail = (a: number, b: number) => {
    const alts = fixedWidth(a, b, width - 1, base);
    return alts.length === 1 ? (alts[0] as string) : `(?:${alts.join('|')})`;
  };
  if (ld === hd) return [digit(ld, base) + tail(lo % p, hi % p)];
  const out: string[] = [];
  let from = ld;
  let to = hd;
  if (lo % p !== 0) {
    out.push(digit(ld, base) + tail(lo % p, p - 1));
    from++;
  }
  const last = hi % p !== p - 1 ? digit(hd, base) + tail(0, hi % p) : null;
  if (last !== null) to--;
  if (from <= to) out.push(digitClass(from, to, base) + any);
  if (last !== null) out.push(last);
  return out;
}

/** A regex group matching exactly the numbers lo..hi written in `base` without leading zeros. */
export function numberRangeRegex(lo: number, hi: number, base: 10 | 16): string {
  // Every number of up to k digits: canonical URLs never write leading zeros, so a plain
  // repetition says the same in fewer RE2 instructions.
  for (let k = 1; lo === 0 && base ** k - 1 <= hi; k++)
    if (base ** k - 1 === hi) return `${digitClass(0, base - 1, base)}{1,${k}}`;
  const alts: string[] = [];
  for (let width = 1; ; width++) {
    const min = width === 1 ? 0 : base ** (width - 1);
    const max = base ** width - 1;
    if (min > hi) break;
    const a = Math.max(lo, min);
    const b = Math.min(hi, max);
    if (a <= b) alts.push(...fixedWidth(a, b, width, base));
  }
  return alts.length === 1 ? (alts[0] as string) : `(?:${alts.join('|')})`;
}
