export { rulesetCoverage, WILDCARD_TESTS, type CollectionRewriter, type CoverageTest, type RulesetCoverage } from './coverage.js';
