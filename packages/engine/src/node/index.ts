export { defaultRulesetsDir, isBundle, listRulesetFiles, loadRulesets, type LoadedRulesets, type LoadOptions } from './load-rulesets.js';
