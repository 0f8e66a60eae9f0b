import { ChannelError } from './errors.js';

/** Ten decimal digits of unix seconds (until the year 2286); longer is surely milliseconds by mistake. */
export const MAX_CHANNEL_TIMESTAMP = 9_999_999_999;

/** Publishers' clocks may run a little ahead of clients'; more than this is a publishing mistake. */
export const FUTURE_TOLERANCE_SECONDS = 24 * 60 * 60;

/**
 * Parses the body of `latest-timestamp`: decimal unix seconds, optionally followed by one
 * newline. Anything else is refused instead of being coerced (the old extension used
 * `Number(text)`, which accepts `""`, `"0x10"` and `"1e9"`).
 */
export function parseAdvertisedTimestamp(bytes: Uint8Array): number {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const match = /^([0-9]{1,10})\r?\n?$/.exec(text);
  const value = match ? Number(match[1]) : NaN;
  if (!match || value < 1 || value > MAX_CHANNEL_TIMESTAMP) {
    const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
    throw new ChannelError(
      'invalid-timestamp',
      `latest-timestamp is not a unix time in seconds: ${JSON.stringify(shown)}`,
    );
  }
  return value;
}

/** A timestamp far ahead of the clock would block every later update, since clients only accept newer ones. */
export function checkNotInFuture(timestamp: number, nowSeconds: number): void {
  if (timestamp > nowSeconds + FUTURE_TOLERANCE_SECONDS) {
    throw new ChannelError(
      'invalid-timestamp',
      `timestamp ${timestamp} (${formatTimestamp(timestamp)}) is in the future (now ${formatTimestamp(nowSeconds)})`,
    );
  }
}

export function formatTimestamp(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString().replace('.000Z', 'Z');
}
