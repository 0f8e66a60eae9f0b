import { usableInstalled } from './freshness.js';
import type { ChannelRecord } from './state.js';

/** An installed channel bundle, as the rewriting side needs it. */
export interface InstalledChannel {
  name: string;
  timestamp: number;
  /** Decompressed, verified bundle bytes for `loadBundle`. */
  bundle: Uint8Array;
  scope: string;
  /** Hosts outside the scope its rules may send URLs to. */
  destinations: string[];
  replacesDefaults: boolean;
}

export interface ActiveChannels {
  /** Channels whose bundles apply, in the given record order (earlier channels take precedence). */
  channels: InstalledChannel[];
  /** False when a channel that replaces the defaults has a usable bundle. */
  useDefaults: boolean;
}

/**
 * Decides which installed bundles apply, each under its record's definition. A bundle verified
 * for another definition, or signed by a revoked key, does not apply. A replacing channel's
 * bundle older than the built-in defaults is ignored (the client was upgraded past it), so
 * upgrading never downgrades rules.
 */
export function selectActiveChannels(
  records: readonly ChannelRecord[],
  defaultsTimestamp?: number,
): ActiveChannels {
  const channels: InstalledChannel[] = [];
  let useDefaults = true;
  for (const record of records) {
    const installed = usableInstalled(record.channel, record);
    if (!installed) continue;
    const { name, scope, destinations, replacesDefaults } = record.channel;
    if (
      replacesDefaults &&
      defaultsTimestamp !== undefined &&
      installed.timestamp < defaultsTimestamp
    )
      continue;
    if (replacesDefaults) useDefaults = false;
    channels.push({
      name,
      timestamp: installed.timestamp,
      bundle: installed.bundle,
      scope,
      destinations,
      replacesDefaults,
    });
  }
  return { channels, useDefaults };
}
