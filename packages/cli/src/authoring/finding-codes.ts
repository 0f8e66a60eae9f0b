/**
 * Every code that `check` and `test` report, as the engine's parser, lint, coverage and regex
 * checks write them (test/finding-codes.test.ts keeps this list in step with the engine's
 * source). The config file may name only these: a typo would otherwise change nothing, silently.
 */
export const FINDING_CODES: ReadonlySet<string> = new Set([
  'changes-domain',
  'dead-rule',
  'default-off-empty',
  'duplicate-name',
  'duplicate-target',
  'duplicate-test',
  'empty-name',
  'excluded-still-rewritten',
  'exclusion-coverage',
  'exclusion-unanchored',
  'file-name',
  'from-prefix',
  'invalid-regex',
  'missing-attribute',
  'nested-element',
  'no-rule',
  'no-target',
  'platform-value',
  'root-element',
  'rule-coverage',
  'securecookie-wildcard',
  'suppression-reason',
  'target-case',
  'target-chars',
  'target-coverage',
  'target-covered',
  'target-empty',
  'target-empty-label',
  'target-middle-wildcard',
  'target-no-public-suffix',
  'target-non-ascii',
  'target-not-host',
  'target-port',
  'target-public-suffix',
  'target-repeated',
  'target-trailing-dot',
  'target-wildcard',
  'test-no-rule',
  'test-no-target',
  'test-url',
  'test-url-slash',
  'text-content',
  'to-copies-fragment',
  'to-https-colon',
  'to-invalid-url',
  'to-literal-dollar',
  'to-missing-group',
  'to-prefix',
  'unescaped-dot',
  'unknown-attribute',
  'unknown-element',
  'unreachable-exclusion',
  'unreachable-rule',
  'unsafe-regex',
  'xml-syntax',
]);

/**
 * Codes of a ruleset that does not load at all: the parser's errors (nothing after them is
 * checked) and patterns the regex door refuses. The config may not turn them off or into
 * warnings, or a ruleset that no browser or command will ever use would pass.
 */
export const UNLOADABLE_CODES: ReadonlySet<string> = new Set([
  'xml-syntax',
  'root-element',
  'missing-attribute',
  'nested-element',
  'unknown-element',
  'invalid-regex',
  'no-target',
  'no-rule',
  'unsafe-regex',
]);
