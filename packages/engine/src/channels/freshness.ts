import { channelBinding, type ChannelDefinition } from './definition.js';
import { rootFloor } from './root-floor.js';
import { formatTimestamp } from './timestamp.js';
import type { ChannelRecord, InstalledBundle } from './state.js';

/**
 * Lowest key version a release may be signed with: the definition's floor, or a newer key
 * already seen under the same root key (under any definition: see rootFloor).
 */
export function requiredKeyVersion(
  def: ChannelDefinition,
  record: ChannelRecord | undefined,
): number {
  return Math.max(def.minKeyVersion, rootFloor(def, record).keyVersion);
}

/** Why an installed bundle does not apply under `def`, or null when it does. */
export function installedProblem(
  def: ChannelDefinition,
  record: ChannelRecord | undefined,
): string | null {
  const installed = record?.installed;
  if (installed === undefined) return null;
  if (installed.verifiedFor !== channelBinding(def))
    return 'it was verified for another name, address, scope, destination list or root key';
  // The definition may have raised its floor since the install (a replayed old release).
  if (installed.timestamp < def.minTimestamp)
    return `it is dated ${installed.timestamp} (${formatTimestamp(installed.timestamp)}), older than the definition's minimum ${def.minTimestamp} (${formatTimestamp(def.minTimestamp)})`;
  const required = requiredKeyVersion(def, record);
  if (installed.keyVersion < required)
    return `it is signed by key version ${installed.keyVersion}, which is revoked (version ${required} or newer is required)`;
  return null;
}

/** The installed bundle, if it applies under `def` (right binding, not too old, unrevoked key). */
export function usableInstalled(
  def: ChannelDefinition,
  record: ChannelRecord | undefined,
): InstalledBundle | undefined {
  return installedProblem(def, record) === null ? record?.installed : undefined;
}

export interface ChannelFreshness {
  /** The installed release is older than the definition's maximum age. */
  stale: boolean;
  /** Seconds since the installed release was signed (null: nothing installed). */
  ageSeconds: number | null;
  maxAgeSeconds: number;
}

/**
 * Stale rules keep applying (docs/update-channels.md, "Freshness"): they only upgrade URLs inside
 * the scope to destinations the channel owns, and dropping them would hand those sites back to
 * plain HTTP whenever an attacker can freeze the mirror. Staleness is shown instead.
 */
export function channelFreshness(
  def: ChannelDefinition,
  record: ChannelRecord | undefined,
  nowSeconds: number,
): ChannelFreshness {
  const installed = usableInstalled(def, record);
  const maxAgeSeconds = def.maxAgeDays * 86_400;
  if (installed === undefined) return { stale: false, ageSeconds: null, maxAgeSeconds };
  const ageSeconds = Math.max(0, nowSeconds - installed.timestamp);
  return { stale: ageSeconds > maxAgeSeconds, ageSeconds, maxAgeSeconds };
}
