import type { ChannelRecord, ChannelStorage } from '@httpsify/engine/channels';
import type { StorageArea } from '../platform/browser-api.js';
import { decodeChannelRecord, encodeChannelRecord } from './record-codec.js';

/** One storage.local key per channel; the settings keys never start with this. */
export const CHANNEL_KEY_PREFIX = 'channel:';

export function channelKey(name: string): string {
  return CHANNEL_KEY_PREFIX + name;
}

/**
 * The engine's ChannelStorage on storage.local. `save` is a single `set` of a single key, which
 * the browser writes atomically: a reader sees the old record or the new one, never a new
 * timestamp next to an old bundle.
 */
export function storageChannelStorage(area: StorageArea, name: string): ChannelStorage {
  const key = channelKey(name);
  return {
    async load() {
      const value = (await area.get([key]))[key];
      return value === undefined ? undefined : decodeChannelRecord(value, key);
    },
    async save(record: ChannelRecord) {
      if (record.channel.name !== name)
        throw new Error(`record of "${record.channel.name}" cannot be saved as "${name}"`);
      await area.set({ [key]: encodeChannelRecord(record) });
    },
  };
}

/** Names of every channel that has stored state (including ones no longer subscribed). */
export async function storedChannelNames(area: StorageArea): Promise<string[]> {
  const keys =
    typeof area.getKeys === 'function' ? await area.getKeys() : Object.keys(await area.get(null));
  return keys
    .filter((k) => k.startsWith(CHANNEL_KEY_PREFIX))
    .map((k) => k.slice(CHANNEL_KEY_PREFIX.length));
}

export async function removeChannelRecords(
  area: StorageArea,
  names: readonly string[],
): Promise<void> {
  if (names.length > 0) await area.remove(names.map(channelKey));
}
