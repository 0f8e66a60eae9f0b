/** What one option may hold; `undefined` (left out) always means its default. */
type Check = (value: unknown) => boolean;

const isFunction: Check = (v) => typeof v === 'function';
const hasMethod =
  (name: string): Check =>
  (v) =>
    typeof v === 'object' && v !== null && typeof (v as Record<string, unknown>)[name] === 'function';
const integerIn =
  (min: number, max: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** Each option the package takes: how it is checked, and what it should be, for the message. */
export const OPTION_RULES: Record<string, { check: Check; expected: string }> = {
  // Checked by checkPolicy (policy.ts), whose message says which policies there are.
  policy: { check: () => true, expected: '' },
  rewriter: { check: hasMethod('rewrite'), expected: 'an object with a rewrite(url) method, such as an Engine' },
  dispatcher: { check: hasMethod('dispatch'), expected: 'an undici Dispatcher' },
  // fetch itself stops at 20; past 100 a loop is being followed, not a site.
  maxRedirects: { check: integerIn(0, 100), expected: 'an integer from 0 to 100' },
  // Up to an hour (setTimeout's own ceiling is under 25 days; a NaN or 0 would fire at once).
  preferTimeoutMs: { check: integerIn(1, 3_600_000), expected: 'an integer number of milliseconds from 1 to 3600000' },
  onUpgrade: { check: isFunction, expected: 'a function' },
  allowHttpFallbackWithCredentials: { check: (v) => typeof v === 'boolean', expected: 'true or false' },
  allowHttpFallbackWithBody: { check: (v) => typeof v === 'boolean', expected: 'true or false' },
  fetch: { check: isFunction, expected: 'a function' },
};

/**
 * Checks the options object given to `what` when it is created, not on the first request: a
 * NaN `maxRedirects` would follow redirects for ever, a `rewriter` without rewrite() would fail
 * only later, and a misspelt key (`polcy: 'force'`) would silently leave the default policy.
 * Throws a TypeError naming the option and what it should be.
 */
export function checkOptions(what: string, options: unknown, allowed: readonly string[]): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError(`@httpsify/fetch: ${what}: options must be an object`);
  for (const [name, value] of Object.entries(options)) {
    const rule = allowed.includes(name) ? OPTION_RULES[name] : undefined;
    if (rule === undefined) throw new TypeError(`@httpsify/fetch: ${what}: unknown option ${JSON.stringify(name)}; known: ${allowed.join(', ')}`);
    if (value !== undefined && !rule.check(value)) {
      throw new TypeError(`@httpsify/fetch: ${what}: option ${name} must be ${rule.expected}, got ${describe(value)}`);
    }
  }
}

function describe(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'function') return 'a function';
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}
