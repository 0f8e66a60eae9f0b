import { secondsUntilChannelCheck, type LastCheck } from '@httpsify/engine/channels';

export interface CheckPlan {
  /** Channels to check now (never checked, or their due time has passed: catch-up). */
  due: string[];
  /** Unix seconds of the earliest later check, or null when nothing else is scheduled. */
  nextAt: number | null;
}

/**
 * Which channels are due, and when the next alarm should fire. One alarm serves every channel:
 * it is set for the earliest due time and re-armed after each round of checks.
 */
export function planChannelChecks(
  channels: readonly { name: string; lastCheck: LastCheck | undefined }[],
  nowSeconds: number,
): CheckPlan {
  const due: string[] = [];
  let nextAt: number | null = null;
  for (const c of channels) {
    const wait = secondsUntilChannelCheck(c.lastCheck, nowSeconds);
    if (wait === 0) due.push(c.name);
    else if (nextAt === null || nowSeconds + wait < nextAt) nextAt = nowSeconds + wait;
  }
  return { due, nextAt };
}

/** The later of two records of a check (the stored one, and the one kept in memory when saving failed). */
export function latestCheck(
  a: LastCheck | undefined,
  b: LastCheck | undefined,
): LastCheck | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return b.at > a.at ? b : a;
}
