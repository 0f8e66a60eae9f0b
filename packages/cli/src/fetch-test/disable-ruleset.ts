import { statSync } from 'node:fs';
import { LIBRARY_LIMITS } from '@httpsify/engine/library';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { readRegularFile, writeFileAtomic } from '@httpsify/engine/node';

export const DISABLED_REASON = 'failed ruleset test';
const COMMENT_HEADING = 'Disabled by httpsify fetch-test because:';

/** Where the root element's start tag sits: `<` and the point just after its last attribute. */
interface RootTag {
  start: number;
  attributesEnd: number;
  hasDefaultOff: boolean;
}

/** Skips the prolog (BOM, XML declaration, comments, PIs, doctype, blanks) to the root start tag. */
function findRootTag(text: string): RootTag | null {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const after = (needle: string, from: number): number => {
    const at = text.indexOf(needle, from);
    return at < 0 ? -1 : at + needle.length;
  };
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (text.startsWith('<?', i)) i = after('?>', i);
    else if (text.startsWith('<!--', i)) i = after('-->', i + 4);
    else if (text.startsWith('<!', i)) {
      // A doctype may carry an internal subset in brackets, which can itself contain ">".
      const close = text.indexOf(']', i);
      const gt = text.indexOf('>', i);
      i = close >= 0 && close < gt ? after('>', close) : after('>', i);
    } else break;
    if (i < 0) return null;
  }
  if (!/^<ruleset[\s/>]/.test(text.slice(i, i + 9))) return null;
  // Walk the attributes; quoted values may contain ">" or "/".
  const attrRe = /\s+([^\s=/>]+)\s*=\s*("[^"]*"|'[^']*')/y;
  let pos = i + '<ruleset'.length;
  let hasDefaultOff = false;
  for (;;) {
    attrRe.lastIndex = pos;
    const m = attrRe.exec(text);
    if (m === null) break;
    if (m[1] === 'default_off') hasDefaultOff = true;
    pos = attrRe.lastIndex;
  }
  if (!/^\s*\/?>/.test(text.slice(pos, pos + 64))) return null;
  return { start: i, attributesEnd: pos, hasDefaultOff };
}

/**
 * Makes text safe inside an XML comment: no `--` (every `-` followed by `-` gets a space),
 * no characters XML 1.0 forbids, one line. A trailing `-` cannot touch `-->` because each
 * reason line is followed by a newline.
 */
export function commentSafe(text: string): string {
  return text
    .replace(/[\r\n\t]+/g, ' ')
    .replace(
      // eslint-disable-next-line no-control-regex -- characters XML cannot hold
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      '\ufffd',
    )
    .replace(/-(?=-)/g, '- ')
    .replace(/-$/, '- ');
}

const escapeAttribute = (value: string): string =>
  commentSafe(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

export interface DisableEdit {
  /** The new file text. */
  text: string;
  /** Each insertion at its offset in the original text, for callers (and tests) to check. */
  insertions: { offset: number; text: string }[];
  attributeAdded: boolean;
}

/**
 * Disables a ruleset in its source text: `default_off="failed ruleset test"` goes after the
 * root tag's last attribute (unless default_off is already there), and a comment listing the
 * reasons goes right before the root element. Nothing else changes.
 */
export interface DisableWording {
  /** The default_off value (default: DISABLED_REASON). */
  note?: string;
  /** The comment's first line (default: it names fetch-test). */
  heading?: string;
}

export function disableRulesetText(
  text: string,
  reasons: readonly string[],
  wording: DisableWording = {},
): DisableEdit {
  const root = findRootTag(text);
  if (root === null) throw new Error('cannot find the <ruleset> start tag');
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines =
    reasons.length > 0
      ? reasons.map((r) => `\t${commentSafe(r)}`)
      : ['\tsee the fetch-test report'];
  const comment = `<!-- ${wording.heading ?? COMMENT_HEADING}${eol}${lines.join(eol)}${eol}-->${eol}`;
  const insertions = [{ offset: root.start, text: comment }];
  if (!root.hasDefaultOff)
    insertions.push({
      offset: root.attributesEnd,
      text: ` default_off="${escapeAttribute(wording.note ?? DISABLED_REASON)}"`,
    });
  let out = '';
  let last = 0;
  for (const ins of insertions) {
    out += text.slice(last, ins.offset) + ins.text;
    last = ins.offset;
  }
  out += text.slice(last);
  return { text: out, insertions, attributeAdded: !root.hasDefaultOff };
}

/**
 * Applies `disableRulesetText` to a file, checks that the result still parses and is off by
 * default, and replaces the file atomically (temp file in the same directory, then rename).
 */
export async function disableRulesetFile(
  file: string,
  reasons: readonly string[],
  wording: DisableWording = {},
): Promise<DisableEdit> {
  const bytes = readRegularFile(file, LIBRARY_LIMITS.fileBytes);
  const text = bytes.toString('utf8');
  // Editing decoded text is only byte-preserving when the file is valid UTF-8.
  if (!Buffer.from(text, 'utf8').equals(bytes))
    throw new Error(`${file}: not valid UTF-8, left unchanged`);
  const edit = disableRulesetText(text, reasons, wording);
  const check = parseRulesetXml(edit.text, file);
  if (check.ruleset === null || check.ruleset.defaultOff === undefined) {
    throw new Error(`${file}: the edited ruleset would not parse as disabled, left unchanged`);
  }
  await writeFileAtomic(file, edit.text, statSync(file).mode & 0o777);
  return edit;
}
