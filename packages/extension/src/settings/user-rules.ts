import { type Diagnostic, type Ruleset } from '@httpsify/engine';
import type { lintRulesetSource } from '@httpsify/engine/authoring';
import type { UserRule } from './schema.js';

let lint: typeof lintRulesetSource | undefined;

/**
 * Loads the checks a user rule must pass (the linter, whose public-suffix list takes tens of
 * milliseconds to set up) on first need, so a background that starts without user rules never
 * pays for them. Await it before checkUserRuleXml, toUserRule or parseSettingsFile.
 */
export async function loadUserRuleChecks(): Promise<void> {
  lint ??= (await import('./user-rule-lint.js')).lintRulesetSource;
}

/** What the popup's "Add a rule for this site" form collects. */
export interface SimpleRule {
  host: string;
  from: string;
  to: string;
}

const XML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML_ESCAPES[c] as string);
}

export function escapeRegex(text: string): string {
  return text.replace(/[-[\]{}()*+?.,\\^$|#\s]/g, '\\$&');
}

/** The name a simple rule's ruleset gets (shown in lists, unique per host). */
export function userRuleName(host: string): string {
  return `User rule: ${host}`;
}

/**
 * The host a person typed or pasted into "Add a rule": a bare name, or a whole address
 * (`https://www.example.com/page`) whose host is meant. Null when there is no host in it.
 */
export function typedHost(input: string): string | null {
  const text = input.trim();
  if (text === '') return null;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
    return url.hostname === '' ? null : url.hostname;
  } catch {
    return null;
  }
}

/** The form's prefilled rule: this host's http:// URLs (on the page's port) to https://. */
export function defaultSimpleRule(host: string, port = ''): SimpleRule {
  const authority = port === '' ? host : `${host}:${port}`;
  return { host, from: `^http://${escapeRegex(authority)}/`, to: `https://${authority}/` };
}

export function simpleRuleXml(rule: SimpleRule, name = userRuleName(rule.host)): string {
  return [
    `<ruleset name="${escapeXml(name)}">`,
    `  <target host="${escapeXml(rule.host)}" />`,
    `  <rule from="${escapeXml(rule.from)}" to="${escapeXml(rule.to)}" />`,
    `</ruleset>`,
    '',
  ].join('\n');
}

export interface CheckedUserRule {
  ruleset: Ruleset | null;
  /** Everything `httpsify check` reports for the XML. */
  diagnostics: Diagnostic[];
  errors: Diagnostic[];
}

/** Validates ruleset XML with the same checks as `httpsify check`; errors block saving. */
export function checkUserRuleXml(xml: string, file = 'user-rule.xml'): CheckedUserRule {
  if (lint === undefined)
    throw new Error('user-rule checks used before loadUserRuleChecks() finished');
  const { ruleset, diagnostics } = lint(xml, file);
  const errors = diagnostics.filter((d) => d.severity === 'error');
  return { ruleset: errors.length === 0 ? ruleset : null, diagnostics, errors };
}

/** A user rule ready to store, or the errors that prevent it. */
export function toUserRule(
  xml: string,
): { rule: UserRule; ruleset: Ruleset } | { errors: Diagnostic[] } {
  const checked = checkUserRuleXml(xml);
  if (checked.ruleset === null)
    return { errors: checked.errors.length > 0 ? checked.errors : checked.diagnostics };
  return { rule: { name: checked.ruleset.name, xml }, ruleset: checked.ruleset };
}

/** Inserts or replaces (by name) a rule in the list; `replacing` renames an edited rule. */
export function upsertUserRule(
  list: readonly UserRule[],
  rule: UserRule,
  replacing?: string,
): UserRule[] {
  const out = list.filter((r) => r.name !== rule.name && r.name !== replacing);
  out.push(rule);
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Splits a file of several rulesets (an export, or HTTPS Everywhere debugging rulesets) into
 * one XML text per `<ruleset>` element.
 */
export function splitRulesetXml(text: string): string[] {
  const body = text.replace(/<\?xml[^>]*\?>/g, '').replace(/<!--[\s\S]*?-->/g, '');
  const out: string[] = [];
  const re = /<ruleset[\s>][\s\S]*?<\/ruleset>|<ruleset[^>]*\/>/g;
  for (let m = re.exec(body); m !== null; m = re.exec(body)) out.push(`${m[0]}\n`);
  return out;
}

/** All user rules as one XML document (`<rulesetlibrary>` as HTTPS Everywhere's exports). */
export function exportUserRulesXml(list: readonly UserRule[]): string {
  const inner = list.map((r) => r.xml.trim()).join('\n');
  return `<?xml version="1.0" encoding="utf-8"?>\n<rulesetlibrary>\n${inner}\n</rulesetlibrary>\n`;
}
