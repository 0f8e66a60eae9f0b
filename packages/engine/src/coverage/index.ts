export {
  rulesetCoverage,
  RIGHT_WILDCARD_TESTS,
  WILDCARD_TESTS,
  type CollectionRewriter,
  type CoverageTest,
  type RulesetCoverage,
} from './coverage.js';
