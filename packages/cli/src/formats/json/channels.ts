import {
  channelFreshness,
  installedProblem,
  type ChannelCheckReport,
} from '@httpsify/engine/channels';
import type { ChannelStatus } from '../text/channels.js';

/** `update --channel FILE --format json`: each channel's check, in the order given. */
export function channelChecksJson(reports: readonly ChannelCheckReport[]): string {
  return `${JSON.stringify(reports, null, 2)}\n`;
}

/**
 * `update --status --format json`: per channel its definition (the root key's public part only),
 * what is installed, whether it applies and is fresh, and the last checks.
 */
export function channelStatusJson({ stateDir, records, problems, now }: ChannelStatus): string {
  const channels = records.map((record) => {
    const { channel, installed, lastCheck, lastSuccessAt } = record;
    const freshness = channelFreshness(channel, record, now);
    return {
      channel: {
        ...channel,
        rootKey: { kty: channel.rootKey.kty, n: channel.rootKey.n, e: channel.rootKey.e },
      },
      installed: installed && {
        timestamp: installed.timestamp,
        rulesetCount: installed.rulesetCount,
        installedAt: installed.installedAt,
        keyVersion: installed.keyVersion,
      },
      /** Why the installed bundle does not apply (revoked key, other definition), or null. */
      notApplied: installedProblem(channel, record),
      stale: freshness.stale,
      ageSeconds: freshness.ageSeconds,
      signingKeyVersion: record.signingKey?.version ?? null,
      lastCheck,
      lastSuccessAt,
    };
  });
  return `${JSON.stringify({ stateDir, channels, problems }, null, 2)}\n`;
}
