// `@httpsify/engine/parse`: ruleset XML to the model, and the regex checks every ruleset from
// outside passes before it is compiled.
export { parseRulesetXml, type ParseResult } from './xml-ruleset.js';
export { literalPrefix, type LiteralPrefix } from '../regex/literal-prefix.js';
export { guardRegex, screenRegex, type GuardOptions, type GuardVerdict } from '../regex/guard.js';
export { guardRulesets, type GuardResult } from '../regex/guard-rulesets.js';
export { regexSyntaxError } from '../regex/compile-check.js';
