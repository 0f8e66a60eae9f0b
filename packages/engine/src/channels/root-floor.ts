import type { ChannelDefinition } from './definition.js';
import type { ChannelRecord, RootFloor } from './state.js';

/** Identifies a root key: what a definition change must not reset revocation and rollback for. */
export function rootKeyId(def: Pick<ChannelDefinition, 'rootKey'>): string {
  return JSON.stringify([def.rootKey.n, def.rootKey.e]);
}

/** The root key a `channelBinding` string was made under, or null when it cannot be read. */
function rootOfBinding(binding: string): string | null {
  try {
    const parts: unknown = JSON.parse(binding);
    if (!Array.isArray(parts) || parts.length !== 6) return null;
    return JSON.stringify([parts[4], parts[5]]);
  } catch {
    return null;
  }
}

/**
 * The highest key version and release timestamp seen under `def`'s root key, whatever the rest
 * of the definition was then. A widened scope or a new URL prefix is a new binding (its bundles
 * are verified afresh) but not a new root: a key the root revoked stays revoked and a release
 * older than one installed stays refused. Records written before the floor existed are read
 * from their installed bundle and signing key.
 */
export function rootFloor(def: ChannelDefinition, record: ChannelRecord | undefined): RootFloor {
  const root = rootKeyId(def);
  const floor: RootFloor = { root, keyVersion: 0, timestamp: 0 };
  if (record === undefined) return floor;
  if (record.floor?.root === root) {
    floor.keyVersion = record.floor.keyVersion;
    floor.timestamp = record.floor.timestamp;
  }
  const key = record.signingKey;
  if (key !== undefined && rootOfBinding(key.verifiedFor) === root)
    floor.keyVersion = Math.max(floor.keyVersion, key.version);
  const installed = record.installed;
  if (installed !== undefined && rootOfBinding(installed.verifiedFor) === root) {
    floor.keyVersion = Math.max(floor.keyVersion, installed.keyVersion);
    floor.timestamp = Math.max(floor.timestamp, installed.timestamp);
  }
  return floor;
}

/** `floor` raised by what a check has just verified (a certified key, an installed release). */
export function raiseFloor(
  floor: RootFloor,
  seen: { keyVersion?: number; timestamp?: number },
): RootFloor {
  return {
    root: floor.root,
    keyVersion: Math.max(floor.keyVersion, seen.keyVersion ?? 0),
    timestamp: Math.max(floor.timestamp, seen.timestamp ?? 0),
  };
}
