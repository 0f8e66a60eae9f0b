/** Where something sits in a ruleset source file (1-based line and column). */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
}

export interface Target {
  host: string;
  loc?: SourceLocation;
}

export interface Rule {
  from: string;
  to: string;
  loc?: SourceLocation;
}

export interface Exclusion {
  pattern: string;
  loc?: SourceLocation;
}

export interface SecureCookie {
  host: string;
  name: string;
  loc?: SourceLocation;
}

export interface RulesetTest {
  url: string;
  loc?: SourceLocation;
}

/**
 * One ruleset as written in its XML file. Children keep document order, which
 * matters: the first rule that changes a URL wins.
 */
export interface Ruleset {
  name: string;
  /** Present (possibly as a reason string) when the ruleset is off by default. */
  defaultOff?: string;
  /** Any platform makes a ruleset off by default; `mixedcontent` can be opted into. */
  platform?: string;
  targets: Target[];
  rules: Rule[];
  exclusions: Exclusion[];
  secureCookies: SecureCookie[];
  tests: RulesetTest[];
  /** Source file (as given to the parser) and the position of the root element. */
  loc?: SourceLocation;
}

export type Severity = 'error' | 'warning' | 'info';

/** A problem found in a ruleset source, always tied to a file and position. */
export interface Diagnostic {
  severity: Severity;
  /** Stable machine-readable code, e.g. `xml-syntax`, `missing-attribute`, `invalid-regex`. */
  code: string;
  message: string;
  file: string;
  line: number;
  column: number;
}

export const TRIVIAL_FROM = '^http:';
export const TRIVIAL_TO = 'https:';

export function isTrivialRule(rule: { from: string; to: string }): boolean {
  return rule.from === TRIVIAL_FROM && rule.to === TRIVIAL_TO;
}

/** Reference semantics: a ruleset is on unless it has `default_off` or any `platform`. */
export function isDefaultActive(
  ruleset: Pick<Ruleset, 'defaultOff' | 'platform'>,
  options: { mixedContent?: boolean } = {},
): boolean {
  if (ruleset.defaultOff !== undefined) return false;
  if (ruleset.platform === undefined) return true;
  return options.mixedContent === true && ruleset.platform === 'mixedcontent';
}

export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.line}:${d.column}: ${d.severity} ${d.code}: ${d.message}`;
}
