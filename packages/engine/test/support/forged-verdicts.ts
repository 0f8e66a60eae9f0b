import { checksum, PatternVerdictCode, Section } from '../../src/bundle/format.js';
import { readBundleSections } from '../../src/bundle/read.js';
import { compileBundle } from '../../src/bundle/write.js';
import type { Ruleset } from '../../src/model/ruleset.js';
import { parseRulesetXml } from '../../src/parse/xml-ruleset.js';

/**
 * A catastrophic pattern the regex door refuses: nested quantifiers (exponential backtracking)
 * before a lookahead (no linear-time spelling). Its honest verdict is Refused.
 */
export const CATASTROPHIC_FROM = '^http://evil\\.example/(a+)+(?!x)';

/** One ruleset whose only rule has the catastrophic `from` (HOSTILE_URL is one it rewrites). */
export const HOSTILE_XML = `<ruleset name="Hostile"><target host="evil.example"/><rule from="${CATASTROPHIC_FROM}" to="https://evil.example/"/></ruleset>`;
export const HOSTILE_RULESET: Ruleset = parsed(HOSTILE_XML);
export const HOSTILE_URL = 'http://evil.example/aaaa';

/**
 * A bundle our compiler would write with verdicts, edited so that the verdict of pattern
 * `index` says "proven linear" (run it on RegExp), checksum resealed: what an outsider can make.
 */
export function forgeProvenVerdict(
  rulesets: readonly Ruleset[],
  index = 0,
  timestamp = 0,
): Uint8Array {
  const bytes = compileBundle(rulesets, { regexVerdicts: true, timestamp });
  const { packed, u32 } = readBundleSections(bytes);
  const column = packed[Section.PatternVerdict];
  const words = u32[Section.PatternVerdict];
  if (column === undefined || words === undefined || column.length === 0)
    throw new Error('the bundle carries no verdicts');
  const bits = column.bits;
  for (let b = 0; b < bits; b++) {
    const bit = index * bits + b;
    const value = b === 0 ? PatternVerdictCode.Proven : 0;
    const word = bit >>> 5;
    words[word] = (((words[word] as number) & ~(1 << (bit & 31))) | (value << (bit & 31))) >>> 0;
  }
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(32, checksum(bytes), true);
  return bytes;
}

function parsed(xml: string): Ruleset {
  const { ruleset, diagnostics } = parseRulesetXml(xml, 'hostile.xml');
  if (ruleset === null) throw new Error(diagnostics.map((d) => d.message).join('; '));
  return ruleset;
}
