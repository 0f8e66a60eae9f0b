// The main entry is the rewrite engine alone: load a bundle (or compile rulesets already in
// memory) and rewrite. Everything else is a subpath, so importing the engine costs only what a
// rewriting process needs: `@httpsify/engine/parse` (XML and the regex door's checks, pulls saxes),
// `/authoring` (lint, coverage, public suffixes), `/dnr`, `/channels` and `/node`.
export * from './model/ruleset.js';
export { compileBundle, type CompileOptions } from './bundle/write.js';
export {
  readBundleHeader,
  BundleError,
  type BundleHeader,
  type BundleVerification,
} from './bundle/read.js';
export { FORMAT_VERSION } from './bundle/format.js';
export {
  Engine,
  loadBundle,
  type EngineOptions,
  type RegexRefusal,
  type RewriteOutcome,
} from './match/engine.js';
export { formatExplanation, type Explanation, type ExplainStep } from './match/explain.js';
export { createEngine } from './match/create-engine.js';
