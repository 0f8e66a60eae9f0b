import { defaultRulesetsDir, loadRulesets } from '@httpsify/engine/node';
import type { Rewriter } from './policy.js';

let cached: Rewriter | null = null;

/** The rulesets bundled with httpsify, loaded once per process on first use. */
export function defaultRewriter(): Rewriter {
  if (cached === null) cached = loadRulesets([defaultRulesetsDir()]).engine;
  return cached;
}
