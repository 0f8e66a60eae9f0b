import type { Engine } from '@httpsify/engine';
import { ext } from '../platform/browser-api.js';

/** storage.local key: ruleset name → on/off, only where the user differs from the default. */
export const OVERRIDES_KEY = 'rulesetOverrides';

/**
 * Applies the stored switches before the settings controller starts, so requests decided in
 * the meantime already see them. Writes go through the controller (its store's lock).
 */
export async function restoreOverrides(engine: Engine): Promise<void> {
  const stored = (await ext.storage.local.get(OVERRIDES_KEY))[OVERRIDES_KEY] as
    Record<string, boolean> | undefined;
  for (const [name, active] of Object.entries(stored ?? {})) engine.setActive(name, active);
}
