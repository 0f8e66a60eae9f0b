/**
 * `node --import tsx packages/engine/bench/bundle-sections.ts [bundle]`: where the bundle's wire
 * size goes. Compiles the full 2018 corpus as `npm run bench` does (or reads the given bundle)
 * and prints each section's raw bytes, its gzip size alone, and its share of the whole bundle's
 * gzip size (the whole minus the whole without it: what removing it would save on the wire).
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { compileBundle, type Ruleset } from '../src/index.js';
import { HEADER_BYTES, Section } from '../src/bundle/format.js';
import { checkRulesetRegexes, parseRulesetXml } from '../src/parse/index.js';
import { listRulesetFiles } from '../src/node/index.js';
import { corpusRulesDir } from '../test/support/corpus.js';

/** Section names in Section order (format.ts). */
const NAMES = [
  'Layout',
  'Labels',
  'ChildCounts',
  'Nodes',
  'NodeIndex',
  'RefList',
  'Dictionary',
  'StrBytes',
  'RsFlags',
  'RsName',
  'NoteOwner',
  'Note',
  'PlatformOwner',
  'Platform',
  'RsRuleStart',
  'RsExclStart',
  'RsCookieStart',
  'RuleFrom',
  'RuleTo',
  'RuleKind',
  'ExclPattern',
  'CookieHost',
  'CookieName',
  'PatternVerdict',
  'NodeRef',
  'LabelDictionary',
];
if (NAMES.length !== Section.Count) throw new Error('section names are out of date');

function corpusBundle(): Uint8Array {
  const rulesets: Ruleset[] = [];
  for (const file of listRulesetFiles(corpusRulesDir())) {
    const parsed = parseRulesetXml(readFileSync(file, 'utf8'), file);
    if (parsed.ruleset !== null) rulesets.push(parsed.ruleset);
  }
  // As the extension's build compiles its packaged defaults: with the regex door's verdicts.
  return compileBundle(checkRulesetRegexes(rulesets).rulesets, { regexVerdicts: true });
}

const bundle =
  process.argv[2] === undefined ? corpusBundle() : new Uint8Array(readFileSync(process.argv[2]));
const gzip = (bytes: Uint8Array): number => gzipSync(bytes, { level: 9 }).length;
const whole = gzip(bundle);
const view = new DataView(bundle.buffer, bundle.byteOffset, bundle.byteLength);
const kb = (n: number): string => (n / 1000).toFixed(1).padStart(9);
console.log(
  `bundle: ${kb(bundle.length)} KB raw, ${kb(whole)} KB gzip (${(whole / 2 ** 20).toFixed(3)} MiB)`,
);
console.log(
  `${'section'.padEnd(16)} ${'raw KB'.padStart(9)} ${'gzip KB'.padStart(9)} ${'share KB'.padStart(9)}`,
);
const rows: [string, number, number, number][] = [];
for (let i = 0; i < Section.Count; i++) {
  const offset = view.getUint32(HEADER_BYTES + i * 8, true);
  const length = view.getUint32(HEADER_BYTES + i * 8 + 4, true);
  const without = new Uint8Array(bundle.length - length);
  without.set(bundle.subarray(0, offset));
  without.set(bundle.subarray(offset + length), offset);
  rows.push([
    NAMES[i] as string,
    length,
    gzip(bundle.subarray(offset, offset + length)),
    whole - gzip(without),
  ]);
}
for (const [name, raw, alone, share] of rows.sort((a, b) => b[3] - a[3]))
  console.log(`${name.padEnd(16)} ${kb(raw)} ${kb(alone)} ${kb(share)}`);
