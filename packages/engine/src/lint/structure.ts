import { saxesParser } from '../parse/saxes-module.js';
import type { Diagnostic } from '../model/ruleset.js';

/** Attributes each element may carry (RelaxNG schema of the reference project). */
const KNOWN_ATTRIBUTES: Record<string, readonly string[]> = {
  ruleset: ['name', 'default_off', 'platform'],
  target: ['host'],
  rule: ['from', 'to'],
  exclusion: ['pattern'],
  securecookie: ['host', 'name'],
  test: ['url'],
};

/**
 * Structure facts the model does not keep: unknown attributes, text content, the `platform`
 * value and empty `name`/`default_off`. Element kinds, nesting, required attributes and XML
 * syntax are the parser's job; this pass stays silent on malformed XML for that reason.
 */
export function lintStructure(xml: string, file: string): Diagnostic[] {
  const found: Diagnostic[] = [];
  const report = (
    severity: Diagnostic['severity'],
    code: string,
    message: string,
    line: number,
    column: number,
  ): void => {
    found.push({ severity, code, message, file, line, column });
  };
  let depth = 0;
  let tagLine = 1;
  let tagColumn = 1;
  let broken = false;
  // Position just after the last markup seen (saxes columns count consumed characters, 0-based).
  let markLine = 1;
  let markColumn = 0;
  const mark = (): void => {
    markLine = parser.line;
    markColumn = parser.column;
    ltLine = parser.line;
    ltColumn = parser.column + 1;
  };
  const Parser = saxesParser();
  const parser = new Parser({ position: true });
  parser.on('error', () => {
    broken = true;
  });
  // Where the next `<` sits: saxes emits text on reading the `<` that ends it, and after markup
  // the `<` can only follow directly. (At opentagstart saxes has read past the name already.)
  let ltLine = 1;
  let ltColumn = 1;
  parser.on('opentagstart', () => {
    tagLine = ltLine;
    tagColumn = ltColumn;
  });
  parser.on('opentag', (tag) => {
    // Without xmlns the attributes are plain strings.
    const attributes = tag.attributes as Record<string, string>;
    depth++;
    mark();
    const known = KNOWN_ATTRIBUTES[tag.name];
    if (known === undefined || depth > 2) return;
    for (const name of Object.keys(attributes)) {
      if (!known.includes(name)) {
        report(
          'error',
          'unknown-attribute',
          `<${tag.name}> has unknown attribute ${name}= (allowed: ${known.join(', ')})`,
          tagLine,
          tagColumn,
        );
      }
    }
    if (tag.name !== 'ruleset' || depth !== 1) return;
    const { name, platform } = attributes;
    const defaultOff = attributes['default_off'];
    if (name !== undefined && name.trim() === '')
      report(
        'error',
        'empty-name',
        '<ruleset> name is empty; users toggle rulesets by name',
        tagLine,
        tagColumn,
      );
    if (platform !== undefined && platform !== 'mixedcontent') {
      report(
        'error',
        'platform-value',
        `platform="${platform}" is not allowed; the only platform is "mixedcontent"`,
        tagLine,
        tagColumn,
      );
    }
    if (defaultOff !== undefined && defaultOff.trim() === '') {
      report(
        'warning',
        'default-off-empty',
        'default_off="" turns the ruleset off here but left it on in HTTPS Everywhere; give the reason, e.g. default_off="mismatched"',
        tagLine,
        tagColumn,
      );
    }
  });
  parser.on('closetag', () => {
    depth--;
    mark();
  });
  parser.on('comment', mark);
  parser.on('processinginstruction', mark);
  parser.on('doctype', mark);
  parser.on('text', (text: string) => {
    const textLine = markLine;
    const textColumn = markColumn;
    ltLine = parser.line;
    ltColumn = parser.column;
    if (depth < 1 || text.trim() === '') return;
    // Text starts where the previous markup ended; walk to its first non-blank character.
    let line = textLine;
    let column = textColumn + 1;
    for (const ch of text) {
      if (ch.trim() !== '') break;
      if (ch === '\n') {
        line++;
        column = 1;
      } else {
        column++;
      }
    }
    report(
      'error',
      'text-content',
      `text "${text.trim().slice(0, 40)}" inside <${depth === 1 ? 'ruleset' : 'element'}>; only elements and comments are allowed`,
      line,
      column,
    );
  });
  parser.on('cdata', () => {
    report(
      'error',
      'text-content',
      'CDATA section inside <ruleset>; only elements (and comments) are allowed',
      parser.line,
      parser.column + 1,
    );
  });
  try {
    parser.write(xml).close();
  } catch {
    broken = true;
  }
  return broken ? [] : found;
}
