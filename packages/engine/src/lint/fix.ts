import type { AST } from '@eslint-community/regexpp';
import { createEngine } from '../match/create-engine.js';
import { isTrivialRule, type Rule, type Ruleset, type SourceLocation } from '../model/ruleset.js';
import { lineStarts, position } from '../parse/text-position.js';
import { parseRulesetXml } from '../parse/xml-ruleset.js';
import { rulesetRegexOrNull } from '../regex/safe-regex.js';
import { hostPartOf, parsePattern } from './regex-ast.js';

/** One replacement of source text: `[start, end)` of the original becomes `text`. */
export interface FixEdit {
  start: number;
  end: number;
  text: string;
}

export interface Fix {
  code: 'trivialize' | 'escape-dot' | 'securecookie-any';
  /** Where the fix applies (the element it changes) and what it does, in plain words. */
  line: number;
  message: string;
  edits: FixEdit[];
}

export interface FixResult {
  fixes: Fix[];
  /** The source with every fix applied (the input itself when there is none). */
  fixed: string;
  /** Fixes found but dropped because the ruleset would then rewrite one of its test URLs differently. */
  rejected: Fix[];
}

/** An element of the source with its attributes' raw value ranges. */
interface ElementSpan {
  name: string;
  start: number;
  end: number;
  line: number;
  column: number;
  attributes: Map<string, { start: number; end: number; raw: string }>;
}

const MARKUP =
  /<!--[\s\S]*?-->|<([A-Za-z_][\w.-]*)\b((?:[^>"']|"[^"]*"|'[^']*')*?)(\/?)>(?:\s*<\/\1\s*>)?/g;
const ATTRIBUTE = /([A-Za-z_][\w.-]*)(\s*=\s*)(?:"([^"]*)"|'([^']*)')/g;

/** The ruleset's child elements in document order, outside comments. */
function elementSpans(xml: string): ElementSpan[] {
  const starts = lineStarts(xml);
  const spans: ElementSpan[] = [];
  for (const m of xml.matchAll(MARKUP)) {
    if (m[1] === undefined || m[1] === 'ruleset') continue;
    const attrsOffset = m.index + 1 + m[1].length;
    const attributes = new Map<string, { start: number; end: number; raw: string }>();
    for (const a of (m[2] as string).matchAll(ATTRIBUTE)) {
      const raw = a[3] ?? a[4] ?? '';
      const start = attrsOffset + a.index + (a[1] as string).length + (a[2] as string).length + 1;
      attributes.set(a[1] as string, { start, end: start + raw.length, raw });
    }
    spans.push({
      name: m[1],
      start: m.index,
      end: m.index + m[0].length,
      ...position(starts, m.index),
      attributes,
    });
  }
  return spans;
}

/** The span of a model element, when the scan and the parser agree on where it is. */
function spanOf(
  spans: readonly ElementSpan[],
  name: string,
  loc: SourceLocation | undefined,
): ElementSpan | null {
  if (loc === undefined) return null;
  return (
    spans.find((s) => s.name === name && s.line === loc.line && s.column === loc.column) ?? null
  );
}

/** Every host an `^http://…/` pattern's host part can match, when it is a finite list of literals. */
function explodeHosts(elements: readonly AST.Element[], limit = 256): string[] | null {
  let acc: string[] = [''];
  const join = (options: string[] | null): boolean => {
    if (options === null) return false;
    const next: string[] = [];
    for (const a of acc) for (const o of options) next.push(a + o);
    acc = next;
    return acc.length <= limit;
  };
  const ofElement = (el: AST.Element): string[] | null => {
    switch (el.type) {
      case 'Character':
        return [String.fromCodePoint(el.value)];
      case 'Group':
      case 'CapturingGroup': {
        const out: string[] = [];
        for (const alt of el.alternatives) {
          const inner = explodeHosts(alt.elements, limit);
          if (inner === null) return null;
          out.push(...inner);
        }
        return out.length <= limit ? out : null;
      }
      case 'Quantifier': {
        if (el.min !== 0 || el.max !== 1) return null;
        const inner = ofElement(el.element);
        return inner === null ? null : ['', ...inner];
      }
      default:
        return null;
    }
  };
  for (const el of elements) if (!join(ofElement(el))) return null;
  return acc;
}

/**
 * Whether a ruleset's rules only upgrade their hosts to https without changing anything else,
 * over exactly its targets, so `<rule from="^http:" to="https:" />` does the same (EFF's
 * utils/trivialize-rules). Returns the rules to replace, or null.
 */
function trivializable(ruleset: Ruleset): Rule[] | null {
  if (ruleset.rules.length === 0 || ruleset.rules.some(isTrivialRule)) return null;
  if (ruleset.targets.some((t) => t.host.includes('*'))) return null;
  const targets = new Set(ruleset.targets.map((t) => t.host));
  const handled = new Set<string>();
  for (const rule of ruleset.rules) {
    const pattern = parsePattern(rule.from);
    if (pattern === null) return null;
    const host = hostPartOf(rule.from, pattern);
    // Only `^http://HOST/` with nothing after the slash: a path condition would be lost.
    if (host === null || !host.closed || rule.from !== `^http://${host.source}/`) return null;
    const hosts = explodeHosts(host.elements);
    if (hosts === null) return null;
    // A ruleset pattern: it runs through the regex door like any other.
    const re = rulesetRegexOrNull(rule.from, { use: 'replace', to: rule.to });
    if (re === null) return null;
    for (const h of hosts) {
      if (!targets.has(h) || handled.has(h)) continue;
      for (const path of ['/', '/a/b?c=d#e']) {
        const url = `http://${h}${path}`;
        if (!re.test(url) || re.replace(url, rule.to) !== `https://${h}${path}`) return null;
      }
      handled.add(h);
    }
  }
  return [...targets].every((t) => handled.has(t)) ? ruleset.rules : null;
}

/** Removes a whole element; with its line when nothing else is on it. */
function removal(xml: string, span: ElementSpan): FixEdit {
  const lineStart = xml.lastIndexOf('\n', span.start - 1) + 1;
  const newline = xml.indexOf('\n', span.end);
  const lineEnd = newline === -1 ? xml.length : newline + 1;
  const alone =
    xml.slice(lineStart, span.start).trim() === '' && xml.slice(span.end, lineEnd).trim() === '';
  return alone
    ? { start: lineStart, end: lineEnd, text: '' }
    : { start: span.start, end: span.end, text: '' };
}

/** Offsets of `.` in the host part that stand alone (not `.*`, `.+`): meant as a literal dot. */
function bareHostDots(source: string): number[] {
  const pattern = parsePattern(source);
  if (pattern === null) return [];
  const host = hostPartOf(source, pattern);
  if (host === null) return [];
  const found: number[] = [];
  const visit = (node: AST.Node): void => {
    if (node.type === 'CharacterSet' && node.kind === 'any' && node.parent.type === 'Alternative')
      found.push(node.start);
    if (node.type === 'Group' || node.type === 'CapturingGroup')
      for (const alt of node.alternatives) alt.elements.forEach(visit);
  };
  host.elements.forEach(visit);
  return found;
}

/** The URLs a ruleset states it is for: its tests and the implied `http://TARGET/`. */
function ownTestUrls(ruleset: Ruleset): string[] {
  return [
    ...ruleset.tests.map((t) => t.url),
    ...ruleset.targets.filter((t) => !t.host.includes('*')).map((t) => `http://${t.host}/`),
  ];
}

function applyEdits(xml: string, edits: readonly FixEdit[]): string {
  let out = '';
  let at = 0;
  for (const e of [...edits].sort((a, b) => a.start - b.start)) {
    out += xml.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + xml.slice(at);
}

/** Whether two versions of a ruleset give the same result on every URL in `urls`. */
function sameResults(before: Ruleset, after: Ruleset, urls: readonly string[]): boolean {
  const a = createEngine([{ ...before, defaultOff: undefined, platform: undefined }]);
  const b = createEngine([{ ...after, defaultOff: undefined, platform: undefined }]);
  const result = (
    engine: ReturnType<typeof createEngine>,
    url: string,
  ): string | null | 'error' => {
    try {
      return engine.rewrite(url);
    } catch {
      return 'error';
    }
  };
  return urls.every((u) => result(a, u) === result(b, u));
}

/**
 * The automatic fixes for one ruleset file: trivialise rules that only upgrade their own targets,
 * escape a lone `.` in a host part, write `.+` for "any" in secure cookies. Each edit changes
 * only the bytes it must. A fix is kept only when the fixed file still parses and rewrites
 * every one of the ruleset's own test URLs (explicit and implied) exactly as before.
 */
export function fixRuleset(xml: string, file: string): FixResult {
  const parsed = parseRulesetXml(xml, file);
  const none: FixResult = { fixes: [], fixed: xml, rejected: [] };
  if (parsed.ruleset === null) return none;
  const ruleset = parsed.ruleset;
  const spans = elementSpans(xml);
  const candidates: Fix[] = [];

  const rules = trivializable(ruleset);
  const ruleSpans = rules?.map((r) => spanOf(spans, 'rule', r.loc)) ?? [];
  if (rules !== null && ruleSpans.every((s) => s !== null)) {
    const [first, ...rest] = ruleSpans as ElementSpan[];
    const edits: FixEdit[] = [
      {
        start: (first as ElementSpan).start,
        end: (first as ElementSpan).end,
        text: '<rule from="^http:" to="https:" />',
      },
      ...rest.map((s) => removal(xml, s)),
    ];
    candidates.push({
      code: 'trivialize',
      line: (first as ElementSpan).line,
      message: `${rules.length === 1 ? 'the rule only upgrades' : `the ${rules.length} rules only upgrade`} the ruleset's own targets: one rule from="^http:" to="https:" does the same`,
      edits,
    });
  } else {
    const patterns: [string, string, SourceLocation | undefined, string][] = [
      ...ruleset.rules.map(
        (r) =>
          ['rule', 'from', r.loc, r.from] as [string, string, SourceLocation | undefined, string],
      ),
      ...ruleset.exclusions.map(
        (e) =>
          ['exclusion', 'pattern', e.loc, e.pattern] as [
            string,
            string,
            SourceLocation | undefined,
            string,
          ],
      ),
    ];
    for (const [name, attr, loc, source] of patterns) {
      const span = spanOf(spans, name, loc);
      const value = span?.attributes.get(attr);
      // Entities in the value would shift offsets: leave such a pattern to the author.
      if (span == null || value === undefined || value.raw !== source) continue;
      const dots = bareHostDots(source);
      if (dots.length === 0) continue;
      candidates.push({
        code: 'escape-dot',
        line: span.line,
        message: `${attr} "${source}": escape the "." in the host part ("\\."); unescaped it matches any character`,
        edits: dots.map((d) => ({ start: value.start + d, end: value.start + d + 1, text: '\\.' })),
      });
    }
  }
  for (const cookie of ruleset.secureCookies) {
    const span = spanOf(spans, 'securecookie', cookie.loc);
    if (span === null) continue;
    const edits: FixEdit[] = [];
    for (const attr of ['host', 'name']) {
      const value = span.attributes.get(attr);
      if (value !== undefined && (value.raw === '.' || value.raw === '.*'))
        edits.push({ start: value.start, end: value.end, text: '.+' });
    }
    if (edits.length > 0)
      candidates.push({
        code: 'securecookie-any',
        line: span.line,
        message: 'securecookie: write ".+" for "any"',
        edits,
      });
  }

  const urls = ownTestUrls(ruleset);
  const fixes: Fix[] = [];
  const rejected: Fix[] = [];
  let fixed = xml;
  for (const fix of candidates) {
    const trial = applyEdits(xml, [...fixes.flatMap((f) => f.edits), ...fix.edits]);
    const after = parseRulesetXml(trial, file).ruleset;
    if (after !== null && sameResults(ruleset, after, urls)) {
      fixes.push(fix);
      fixed = trial;
    } else {
      rejected.push(fix);
    }
  }
  return { fixes, fixed, rejected };
}
