/** A wrong combination of options or a bad pattern: exit code 2, like commander's own usage errors. */
export class UsageError extends Error {}
