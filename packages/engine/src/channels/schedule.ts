/** Channels are checked once a day, as HTTPS Everywhere did. */
export const CHECK_PERIOD_SECONDS = 24 * 60 * 60;

/**
 * Seconds until the next check is due, given when the last one started. 0 means "now": a
 * client that was asleep or closed past the due time catches up immediately. A last check in
 * the future (the clock went backwards) counts as due, so a wrong clock cannot stall updates.
 */
export function secondsUntilNextCheck(
  lastCheckedAt: number | undefined,
  nowSeconds: number,
  periodSeconds = CHECK_PERIOD_SECONDS,
): number {
  if (lastCheckedAt === undefined || lastCheckedAt > nowSeconds) return 0;
  return Math.max(0, lastCheckedAt + periodSeconds - nowSeconds);
}

/** A failed check is retried sooner than the daily period: most failures are transient server or network trouble. */
export const RETRY_AFTER_FAILURE_SECONDS = 60 * 60;

/** When a channel should next be checked, from what its record says about the last check. */
export function secondsUntilChannelCheck(
  lastCheck: { at: number; result: string } | undefined,
  nowSeconds: number,
  periods: { period?: number; retry?: number } = {},
): number {
  const period =
    lastCheck?.result === 'failed'
      ? (periods.retry ?? RETRY_AFTER_FAILURE_SECONDS)
      : (periods.period ?? CHECK_PERIOD_SECONDS);
  return secondsUntilNextCheck(lastCheck?.at, nowSeconds, period);
}
