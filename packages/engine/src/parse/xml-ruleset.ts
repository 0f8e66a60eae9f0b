import { saxesParser } from './saxes-module.js';
import type { Diagnostic, Ruleset, SourceLocation } from '../model/ruleset.js';
import { regexSyntaxError } from '../regex/compile-check.js';
import { lineStarts, position } from './text-position.js';

export interface ParseResult {
  /** null when the file has errors: a broken ruleset is never half-loaded. */
  ruleset: Ruleset | null;
  diagnostics: Diagnostic[];
}

/** Required attributes of each child element of `<ruleset>`. */
const CHILD_ATTRIBUTES: Record<string, readonly string[]> = {
  target: ['host'],
  rule: ['from', 'to'],
  exclusion: ['pattern'],
  securecookie: ['host', 'name'],
  test: ['url'],
};

/** Attributes that hold a JavaScript regular expression. */
const REGEX_ATTRIBUTES: Record<string, readonly string[]> = {
  rule: ['from'],
  exclusion: ['pattern'],
  securecookie: ['host', 'name'],
};

/**
 * Parses one ruleset file. Errors (malformed XML, missing or misplaced elements,
 * missing attributes, regexes that do not compile) make the ruleset unusable and are
 * all reported with file, line and column; nothing here throws on bad input.
 */
export function parseRulesetXml(xml: string, file: string): ParseResult {
  const diagnostics: Diagnostic[] = [];
  const error = (code: string, message: string, line: number, column: number): void => {
    diagnostics.push({ severity: 'error', code, message, file, line, column });
  };

  let ruleset: Ruleset | null = null;
  let depth = 0;
  let fatal = false;
  let tagLine = 1;
  let tagColumn = 1;

  const Parser = saxesParser();
  const parser = new Parser<{ xmlns: false; position: true }>({ xmlns: false, position: true });
  parser.on('error', (err: Error) => {
    if (fatal) return;
    fatal = true;
    // saxes prefixes messages with "line:column: "; keep the text, report the position ourselves.
    const message = err.message.replace(/^\d+:\d+:\s*/, '');
    error('xml-syntax', `malformed XML: ${message}`, parser.line, parser.column + 1);
  });
  const starts = lineStarts(xml);
  parser.on('opentagstart', (tag) => {
    // The parser stands one character past "<name" (it read the character ending the name,
    // possibly a newline), so locate the "<" by offset rather than by the current column.
    const at = position(starts, Math.max(0, parser.position - tag.name.length - 2));
    tagLine = at.line;
    tagColumn = at.column;
  });
  parser.on('opentag', (tag) => {
    if (fatal) return;
    const loc: SourceLocation = { file, line: tagLine, column: tagColumn };
    depth += 1;
    if (depth === 1) {
      if (tag.name !== 'ruleset') {
        error(
          'root-element',
          `root element is <${tag.name}>, expected <ruleset>`,
          loc.line,
          loc.column,
        );
        return;
      }
      const name = tag.attributes['name'];
      if (name === undefined)
        error('missing-attribute', '<ruleset> has no name attribute', loc.line, loc.column);
      ruleset = {
        name: name ?? '',
        targets: [],
        rules: [],
        exclusions: [],
        secureCookies: [],
        tests: [],
        loc,
      };
      const defaultOff = tag.attributes['default_off'];
      if (defaultOff !== undefined) ruleset.defaultOff = defaultOff;
      const platform = tag.attributes['platform'];
      if (platform !== undefined) ruleset.platform = platform;
      return;
    }
    if (ruleset === null) return;
    if (depth > 2) {
      error(
        'nested-element',
        `<${tag.name}> is nested inside another element; ruleset children take no children`,
        loc.line,
        loc.column,
      );
      return;
    }
    const required = CHILD_ATTRIBUTES[tag.name];
    if (required === undefined) {
      error(
        'unknown-element',
        `unknown element <${tag.name}> (expected target, rule, exclusion, securecookie or test)`,
        loc.line,
        loc.column,
      );
      return;
    }
    const values: string[] = [];
    for (const attr of required) {
      const value = tag.attributes[attr];
      if (value === undefined) {
        error('missing-attribute', `<${tag.name}> has no ${attr} attribute`, loc.line, loc.column);
        return;
      }
      values.push(value);
    }
    for (const attr of REGEX_ATTRIBUTES[tag.name] ?? []) {
      const problem = regexSyntaxError(tag.attributes[attr] as string);
      if (problem !== null)
        error(
          'invalid-regex',
          `<${tag.name}> ${attr} is not a valid JavaScript regular expression: ${problem}`,
          loc.line,
          loc.column,
        );
    }
    const [a, b] = values as [string, string];
    switch (tag.name) {
      case 'target':
        ruleset.targets.push({ host: a, loc });
        break;
      case 'rule':
        ruleset.rules.push({ from: a, to: b, loc });
        break;
      case 'exclusion':
        ruleset.exclusions.push({ pattern: a, loc });
        break;
      case 'securecookie':
        ruleset.secureCookies.push({ host: a, name: b, loc });
        break;
      case 'test':
        ruleset.tests.push({ url: a, loc });
        break;
    }
  });
  parser.on('closetag', () => {
    depth -= 1;
  });

  try {
    parser.write(xml).close();
  } catch (err) {
    // saxes reports through the handler above; anything else is still a syntax problem of this file.
    if (!fatal)
      error(
        'xml-syntax',
        `malformed XML: ${err instanceof Error ? err.message : String(err)}`,
        parser.line,
        parser.column + 1,
      );
    fatal = true;
  }
  if (fatal) return { ruleset: null, diagnostics };
  const parsed = ruleset as Ruleset | null;
  if (parsed === null) {
    if (!diagnostics.some((d) => d.code === 'root-element'))
      error('root-element', 'no <ruleset> element', 1, 1);
    return { ruleset: null, diagnostics };
  }
  const at = parsed.loc as SourceLocation;
  if (parsed.targets.length === 0)
    error('no-target', `ruleset "${parsed.name}" has no <target>`, at.line, at.column);
  if (parsed.rules.length === 0)
    error('no-rule', `ruleset "${parsed.name}" has no <rule>`, at.line, at.column);
  const ok = !diagnostics.some((d) => d.severity === 'error');
  return { ruleset: ok ? parsed : null, diagnostics };
}
