import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { countKey } from '../src/ui/shared/i18n.js';

interface Message {
  message: string;
  placeholders?: Record<string, { content: string }>;
}
const messages = JSON.parse(
  readFileSync(new URL('../static/_locales/en/messages.json', import.meta.url), 'utf8'),
) as Record<string, Message>;

/** chrome.i18n.getMessage's filling: $NAME$ → its placeholder's content, $1… → the substitutions. */
function fill(key: string, substitutions: string[]): string {
  const m = messages[key];
  if (m === undefined) throw new Error(`no message ${key}`);
  return m.message.replace(/\$([A-Za-z0-9_@]+)\$/g, (_, name: string) => {
    const content = m.placeholders?.[name.toLowerCase()]?.content;
    if (content === undefined) throw new Error(`${key}: no placeholder ${name}`);
    return content.replace(/\$(\d)/g, (__, i: string) => substitutions[Number(i) - 1] ?? '');
  });
}

/** Placeholders that carry a number. */
const COUNT_NAMES = new Set(['count', 'shown', 'total', 'done', 'days']);
const isCounted = (m: Message) => Object.keys(m.placeholders ?? {}).some((n) => COUNT_NAMES.has(n));

/** Each counted pair and the words that must agree with the count: [for 1, for any other count]. */
const AGREEMENT: Record<string, [string, string][]> = {
  popupUpgraded: [['request', 'requests']],
  optionsResetShownConfirm: [
    ['changed ruleset', 'changed rulesets'],
    ['its default', 'their defaults'],
  ],
  optionsRulesetCount: [['ruleset', 'rulesets']],
  optionsImportedRules: [['rule', 'rules']],
  optionsImportSomeRules: [['rule was', 'rules were']],
  optionsChannelInstalledValue: [['ruleset', 'rulesets']],
  optionsChannelStaleValue: [['day', 'days']],
  optionsKnownHosts: [
    ['site has', 'sites have'],
    ['its requests', 'their requests'],
  ],
  optionsAllowlistImported: [['entry', 'entries']],
  optionsAboutRulesets: [['ruleset', 'rulesets']],
  optionsAboutRulesetsUndated: [['ruleset', 'rulesets']],
  optionsLibraryParsing: [['file', 'files']],
  optionsLibraryCompiling: [['ruleset', 'rulesets']],
  optionsLibraryDone: [['ruleset', 'rulesets']],
  countRulesets: [['ruleset', 'rulesets']],
  countFiles: [['file', 'files']],
};

/** Counted messages phrased so that one wording is right for every count. */
const ANY_COUNT = [
  'optionsLibraryProblemsTitle',
  'optionsLibraryPageLoadsTitle',
  'optionsLibraryMoreProblems',
  'optionsLibraryReading',
  'optionsLibrarySending',
];

/** A count followed (maybe after "of N" or one adjective) by a noun in the wrong number. */
const PLURAL_AFTER_ONE =
  /\b1 (?:of \d+ )?(?:\w+ )?(rules|rulesets|files|sites|entries|requests|days)\b/;
const SINGULAR_AFTER_OTHER =
  /\b[02] (?:of \d+ )?(?:\w+ )?(rule|ruleset|file|site|entry|request|day)\b/;

/** Every placeholder gets the count if it holds a number, a word otherwise. */
function render(key: string, count: number): string {
  const names = Object.entries(messages[key]?.placeholders ?? {}).sort(([, a], [, b]) =>
    a.content.localeCompare(b.content),
  );
  return fill(
    key,
    names.map(([n]) => (COUNT_NAMES.has(n) ? String(count) : 'Example')),
  );
}

/** The counted pairs: `<base>One` and `<base>Other` both present. */
const bases = Object.keys(messages)
  .flatMap((k) =>
    k.endsWith('One') && messages[`${k.slice(0, -3)}Other`] !== undefined ? [k.slice(0, -3)] : [],
  )
  .sort();
const inPair = (k: string) => bases.includes(k.replace(/(One|Other)$/, ''));

describe('counted messages: singular for 1, plural otherwise', () => {
  it('every message with a count is a one/other pair or worded for every count', () => {
    const counted = Object.keys(messages).filter((k) => isCounted(messages[k] as Message));
    const unpaired = counted.filter((k) => !inPair(k) && !ANY_COUNT.includes(k));
    expect(unpaired).toEqual([]);
    expect(bases).toEqual(Object.keys(AGREEMENT).sort());
    for (const base of bases) {
      expect(isCounted(messages[`${base}One`] as Message), `${base}One`).toBe(true);
      expect(isCounted(messages[`${base}Other`] as Message), `${base}Other`).toBe(true);
    }
  });

  it.each(bases)('%s reads right for 0, 1 and 2', (base) => {
    for (const count of [0, 1, 2]) {
      const text = render(countKey(base, count), count);
      for (const [one, other] of AGREEMENT[base] ?? []) {
        const [right, wrong] = count === 1 ? [one, other] : [other, one];
        expect(text, `${base} (${count}): ${text}`).toMatch(new RegExp(`\\b${right}\\b`));
        expect(text, `${base} (${count}): ${text}`).not.toMatch(new RegExp(`\\b${wrong}\\b`));
      }
      expect(text).not.toMatch(count === 1 ? PLURAL_AFTER_ONE : SINGULAR_AFTER_OTHER);
      expect(text).toContain(String(count));
    }
  });

  it.each(ANY_COUNT)('%s reads right for 0, 1 and 2', (key) => {
    for (const count of [0, 1, 2]) {
      const text = render(key, count);
      expect(text).not.toMatch(count === 1 ? PLURAL_AFTER_ONE : SINGULAR_AFTER_OTHER);
      expect(text).toContain(String(count));
    }
  });

  it('the library summary agrees with both of its counts', () => {
    const phrase = (base: string, n: number) => fill(countKey(base, n), [String(n)]);
    expect(
      fill('optionsLibrarySummary', [phrase('countRulesets', 1), phrase('countFiles', 1), 'today']),
    ).toBe('1 ruleset from 1 file · imported today');
    expect(
      fill('optionsLibrarySummary', [phrase('countRulesets', 0), phrase('countFiles', 2), 'today']),
    ).toBe('0 rulesets from 2 files · imported today');
    expect(
      fill('optionsLibrarySummary', [phrase('countRulesets', 2), phrase('countFiles', 1), 'today']),
    ).toBe('2 rulesets from 1 file · imported today');
  });

  it('the pages ask for counted messages only through tCount, and only for pairs that exist', () => {
    const root = fileURLToPath(new URL('../src/', import.meta.url));
    const files = (readdirSync(root, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(root, f));
    const used = new Set<string>();
    for (const file of files) {
      const source = readFileSync(file, 'utf8');
      for (const m of source.matchAll(/tCount\(\s*'(\w+)'/g)) used.add(m[1] as string);
      // A pair's half named directly would give the wrong wording for other counts.
      for (const base of bases)
        expect(source, file).not.toMatch(new RegExp(`'${base}(One|Other)'`));
    }
    expect([...used].sort()).toEqual(bases);
  });
});
