import { defaultLock, type LockFn } from './lock.js';
import { LEGACY_KEYS, migrate } from './migrations.js';
import { repairSettings } from './repair.js';
import { MAX_REPAIRS, SETTING_KEYS, type Settings } from './schema.js';
import type { StorageArea } from '../platform/browser-api.js';

const LOCK_NAME = 'httpsify-settings';

export type SettingsPatch = Partial<Omit<Settings, 'schemaVersion' | 'repairs'>>;

/**
 * Typed settings over storage.local. Every change is a read-modify-write inside one lock, so two
 * windows adding a site or a rule at the same moment both keep theirs; reads migrate old layouts
 * and repair damage (writing the repaired values back, with the damage recorded).
 */
export class SettingsStore {
  private readonly lock: LockFn;
  private readonly now: () => number;

  constructor(
    private readonly area: StorageArea,
    options: { lock?: LockFn; now?: () => number } = {},
  ) {
    this.lock = options.lock ?? defaultLock();
    this.now = options.now ?? Date.now;
  }

  /** Current settings, migrated and repaired (fixes are persisted). */
  load(): Promise<Settings> {
    return this.lock(LOCK_NAME, () => this.readFixed());
  }

  /**
   * Applies `change` to fresh settings and writes the keys it touched. `change` may return a
   * patch or mutate its argument; it runs while no one else can write.
   */
  update(change: (current: Settings) => SettingsPatch | void): Promise<Settings> {
    return this.lock(LOCK_NAME, async () => {
      const current = await this.readFixed();
      const before = JSON.stringify(current);
      const draft = structuredClone(current);
      const patch = change(draft) ?? {};
      const next = { ...draft, ...patch } as Settings;
      // Whatever the change produced goes through the same validation as stored data.
      const { settings, records } = repairSettings(next, this.now());
      if (records.length > 0)
        settings.repairs = [...current.repairs, ...records].slice(-MAX_REPAIRS);
      const writes: Record<string, unknown> = {};
      for (const key of SETTING_KEYS) {
        if (JSON.stringify(settings[key]) !== JSON.stringify(current[key]))
          writes[key] = settings[key];
      }
      if (Object.keys(writes).length > 0 && JSON.stringify(settings) !== before)
        await this.area.set(writes);
      return settings;
    });
  }

  /** Clears the record of past repairs (the user has seen them). */
  clearRepairs(): Promise<Settings> {
    return this.lock(LOCK_NAME, async () => {
      const current = await this.readFixed();
      await this.area.set({ repairs: [] });
      return { ...current, repairs: [] };
    });
  }

  private async readFixed(): Promise<Settings> {
    // Only settings keys: storage.local also holds installed channel bundles of several MB.
    const raw = await this.area.get([...SETTING_KEYS, ...LEGACY_KEYS]);
    const migrated = migrate(raw, this.now());
    const { settings, changed, records } = repairSettings(migrated.values, this.now());
    if (migrated.notes.length > 0)
      settings.repairs = [...settings.repairs, ...migrated.notes].slice(-MAX_REPAIRS);
    const writes: Record<string, unknown> = {};
    const touched = new Set<keyof Settings>(changed);
    if (migrated.from !== settings.schemaVersion)
      for (const key of SETTING_KEYS) if (key in migrated.values) touched.add(key);
    if (migrated.notes.length > 0 || records.length > 0) touched.add('repairs');
    for (const key of touched) writes[key] = settings[key];
    if (Object.keys(writes).length > 0) await this.area.set(writes);
    if (migrated.removed.length > 0) await this.area.remove(migrated.removed);
    return settings;
  }
}
