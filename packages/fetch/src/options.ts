/** What one option may hold; `undefined` (left out) always means its default. */
type Check = (value: unknown) => boolean;

const isFunction: Check = (v) => typeof v === 'function';
const hasMethod =
  (name: string): Check =>
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Record<string, unknown>)[name] === 'function';
const integerIn =
  (min: number, max: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** Each option the package takes: how it is checked, and what it should be, for the message. */
export const OPTION_RULES: Record<string, { check: Check; expected: string }> = {
  // Checked by checkPolicy (policy.ts), whose message says which policies there are.
  policy: { check: () => true, expected: '' },
  rewriter: {
    check: hasMethod('rewrite'),
    expected: 'an object with a rewrite(url) method, such as an Engine',
  },
  dispatcher: { check: hasMethod('dispatch'), expected: 'an undici Dispatcher' },
  // fetch itself stops at 20; past 100 a loop is being followed, not a site.
  maxRedirects: { check: integerIn(0, 100), expected: 'an integer from 0 to 100' },
  // Up to an hour (setTimeout's own ceiling is under 25 days; a NaN or 0 would fire at once).
  preferTimeoutMs: {
    check: integerIn(1, 3_600_000),
    expected: 'an integer number of milliseconds from 1 to 3600000',
  },
  onUpgrade: { check: isFunction, expected: 'a function' },
  allowHttpFallbackWithCredentials: {
    check: (v) => typeof v === 'boolean',
    expected: 'true or false',
  },
  allowHttpFallbackWithBody: { check: (v) => typeof v === 'boolean', expected: 'true or false' },
  fetch: { check: isFunction, expected: 'a function' },
};

/**
 * Takes the options object given to `what` when it is created, once, into a frozen plain object,
 * and checks that: a NaN `maxRedirects` would follow redirects for ever, a `rewriter` without
 * rewrite() would fail only later, and a misspelt key (`polcy: 'force'`) would silently leave
 * the default policy. Only the snapshot is used afterwards: options read live could differ from
 * what was checked (a getter returning 5 then NaN, a Proxy, an inherited or non-enumerable key
 * that Object.entries skips), so every own key is read once, from its descriptor; getters and
 * inherited options are refused. Throws a TypeError naming the option and what it should be.
 */
export function snapshotOptions<T extends object>(
  what: string,
  options: unknown,
  allowed: readonly (keyof T & string)[],
): Readonly<Partial<T>> {
  const snapshot: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  if (options === undefined) return Object.freeze(snapshot) as Partial<T>;
  const refuse = (why: string): never => {
    throw new TypeError(`@httpsify/fetch: ${what}: ${why}`);
  };
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    refuse('options must be an object');
  const given = options as object;
  const known = allowed as readonly string[];
  for (const key of Reflect.ownKeys(given)) {
    const name = typeof key === 'string' ? key : String(key);
    if (typeof key !== 'string' || !known.includes(key) || OPTION_RULES[key] === undefined)
      refuse(`unknown option ${JSON.stringify(name)}; known: ${known.join(', ')}`);
    const descriptor = Reflect.getOwnPropertyDescriptor(given, key);
    if (descriptor === undefined) continue; // A Proxy listing a key it then denies: not an option.
    if (!('value' in descriptor))
      refuse(`option ${name} must be a plain value, not a getter or setter`);
    snapshot[name] = descriptor.value;
  }
  // An option from the prototype chain is not the caller's own: refused, not silently dropped.
  for (const name of known)
    if (!(name in snapshot) && name in given)
      refuse(
        `option ${name} must be an own property of the options object (it is inherited or hidden)`,
      );
  for (const [name, value] of Object.entries(snapshot)) {
    const rule = OPTION_RULES[name] as { check: Check; expected: string };
    if (value !== undefined && !rule.check(value))
      refuse(`option ${name} must be ${rule.expected}, got ${describe(value)}`);
  }
  return Object.freeze(snapshot) as Partial<T>;
}

function describe(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || value === null)
    return String(value);
  if (typeof value === 'string')
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'function') return 'a function';
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}
