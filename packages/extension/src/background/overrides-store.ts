import type { Engine } from '@httpsify/engine';
import { ext } from './browser-api.js';

/** storage.local key: ruleset name → on/off, only where the user differs from the default. */
export const OVERRIDES_KEY = 'rulesetOverrides';

export async function restoreOverrides(engine: Engine): Promise<void> {
  const stored = (await ext.storage.local.get(OVERRIDES_KEY))[OVERRIDES_KEY] as Record<string, boolean> | undefined;
  for (const [name, active] of Object.entries(stored ?? {})) engine.setActive(name, active);
}

export async function saveOverrides(engine: Engine): Promise<void> {
  await ext.storage.local.set({ [OVERRIDES_KEY]: Object.fromEntries(engine.activeOverrides()) });
}
