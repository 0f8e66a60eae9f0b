/**
 * What the XML rules editor's findings (`httpsify check`'s diagnostics) mean, in words: which
 * message (in _locales) says what is wrong and how to fix it, by the finding's code. The
 * finding itself (line, column, code, message) goes under "Details".
 */
const FAMILIES: [RegExp, string][] = [
  [
    /^(xml-syntax|root-element|nested-element|unknown-element|unknown-attribute|text-content|missing-attribute|empty-name|platform-value)$/,
    'ruleProblemXml',
  ],
  [/^no-target$/, 'ruleProblemNoTarget'],
  [/^no-rule$/, 'ruleProblemNoRule'],
  [/^target-/, 'ruleProblemTarget'],
  [/^(from-|to-|invalid-regex$|unescaped-dot$)/, 'ruleProblemRewrite'],
  [/^test-url/, 'ruleProblemTest'],
  [/^duplicate-name$/, 'ruleProblemDuplicate'],
  [/^engine$/, 'ruleProblemEngine'],
];

export function ruleProblem(d: { code: string; severity: string }): string {
  // A warning does not stop saving: one sentence says so, whatever it is about.
  if (d.severity !== 'error') return 'ruleProblemWarning';
  for (const [re, key] of FAMILIES) if (re.test(d.code)) return key;
  return 'ruleProblemOther';
}

/** The raw finding as `httpsify check` prints it, for "Details". */
export function ruleProblemDetails(d: {
  line: number;
  column: number;
  severity: string;
  code: string;
  message: string;
}): string {
  return `${d.line}:${d.column} ${d.severity} ${d.code}: ${d.message}`;
}
