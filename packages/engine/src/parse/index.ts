// `@httpsify/engine/parse`: ruleset XML to the model, and the regex door every ruleset pattern
// passes before it runs.
export { parseRulesetXml, type ParseResult } from './xml-ruleset.js';
export { literalPrefix, type LiteralPrefix } from '../regex/literal-prefix.js';
export {
  compileDnrRegexFilter,
  compileRulesetRegex,
  judgeRegex,
  rulesetRegexOrNull,
  type CompiledRegex,
  type FilterRegex,
  type PatternUse,
  type RegexVerdict,
  type RulesetRegex,
} from '../regex/safe-regex.js';
export {
  checkRulesetRegexes,
  refusedPatterns,
  type RefusedPattern,
  type RegexCheckResult,
} from '../regex/ruleset-regexes.js';
export { regexSyntaxError } from '../regex/compile-check.js';
