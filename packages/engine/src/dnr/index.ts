export {
  compileDnr,
  rulesetCeilingPriority,
  MAX_COMPILED_PRIORITY,
  DEFAULT_MAX_REGEX_INSTRUCTIONS,
  type DnrCompileOptions,
  type DnrCompileResult,
  type DnrOmission,
  type DnrReport,
} from './compile.js';
export { trailingDotRegex } from './trailing-dots.js';
export {
  DnrEmulator,
  follow,
  parseAsChromium,
  urlFilterToRegExp,
  type DnrOutcome,
  type DnrRequest,
} from './emulate.js';
export { translateRegex, translateReplacement, type Re2Translation } from './re2.js';
export {
  expandLiteralLanguage,
  type LiteralExpansion,
  type LiteralLanguage,
} from '../regex/literal-language.js';
export {
  ALL_RESOURCE_TYPES,
  DNR_LIMITS,
  type DnrAction,
  type DnrCondition,
  type DnrRedirect,
  type DnrResourceType,
  type DnrRule,
} from './types.js';
export { compileDnrOverrides, type DnrOverrides } from './overrides.js';
export {
  measureDnrCoverage,
  measureTrailingDotCoverage,
  withTrailingDot,
  type DnrCoverage,
  type TrailingDotCoverage,
} from './coverage.js';
