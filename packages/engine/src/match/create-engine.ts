import type { Ruleset } from '../model/ruleset.js';
import { compileBundle, type CompileOptions } from '../bundle/write.js';
import { Engine, type EngineOptions } from './engine.js';

/** Compiles parsed rulesets and opens an engine on the result (the XML path and the bundle path share one matcher). */
export function createEngine(
  rulesets: readonly Ruleset[],
  options: EngineOptions & CompileOptions = {},
): Engine {
  // The bundle never left this process, so the load-time verification has nothing to find.
  return new Engine(compileBundle(rulesets, options), { ...options, verify: 'trusted' });
}
