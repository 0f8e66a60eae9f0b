import {
  type ChannelCheckReport,
  channelFreshness,
  type ChannelRecord,
  formatTimestamp,
  installedProblem,
} from '@httpsify/engine/channels';
import { count } from '../../shared/plural.js';

const when = (ts: number): string => `${ts} (${formatTimestamp(ts)})`;

/** One line per channel check, for people. */
export function channelCheckLine(r: ChannelCheckReport): string {
  switch (r.result) {
    case 'updated':
      return `${r.channel}: updated to ${when(r.installedTimestamp as number)}, ${count(r.rulesetCount as number, 'ruleset')}${r.previousTimestamp !== undefined ? ` (was ${r.previousTimestamp})` : ''}${downloadNote(r)}`;
    case 'current':
      return `${r.channel}: up to date at ${when(r.installedTimestamp as number)}`;
    case 'failed': {
      const kept =
        r.installedTimestamp !== undefined
          ? `keeping the installed ${when(r.installedTimestamp)}`
          : 'nothing installed';
      return `${r.channel}: update failed [${r.error?.code}]: ${r.error?.message} (${kept}; retried next time)`;
    }
  }
}

/** How the update came, when a delta was used or offered but not used. */
function downloadNote(r: ChannelCheckReport): string {
  const d = r.download;
  if (d === undefined) return '';
  if (d.kind === 'delta') return `; ${count(d.bytes, 'byte')} downloaded as a delta`;
  return d.deltaProblem === undefined
    ? ''
    : `; the delta was not usable (${d.deltaProblem}), downloaded the whole bundle (${count(d.bytes, 'byte')})`;
}

/** What `httpsify update --status` prints for one installed channel. */
export function channelRecordLines(record: ChannelRecord, now: number): string[] {
  const { channel, installed, lastCheck } = record;
  const lines = [
    `${channel.name}  ${channel.urlPrefix}`,
    `  scope: ${channel.scope === '' ? '(all URLs)' : channel.scope}${channel.destinations.length > 0 ? `; may also send to ${channel.destinations.join(', ')}` : ''}${channel.replacesDefaults ? '; replaces the built-in rulesets' : ''}`,
    installed
      ? `  installed: ${when(installed.timestamp)}, ${count(installed.rulesetCount, 'ruleset')}, signed by key ${installed.keyVersion}`
      : '  installed: nothing yet',
  ];
  const problem = installedProblem(channel, record);
  if (problem !== null) lines.push(`  not applied: ${problem}`);
  const freshness = channelFreshness(channel, record, now);
  if (freshness.stale) {
    const days = Math.floor((freshness.ageSeconds ?? 0) / 86_400);
    lines.push(
      `  STALE: the newest release is ${days} days old, older than the channel's maximum of ${channel.maxAgeDays} days (the server may be frozen or unreachable); its rules still apply`,
    );
  }
  if (lastCheck) {
    const outcome =
      lastCheck.result === 'failed'
        ? `failed [${lastCheck.error?.code}]: ${lastCheck.error?.message}`
        : lastCheck.result;
    lines.push(`  last check: ${formatTimestamp(lastCheck.at)} ${outcome}`);
  }
  if (record.lastSuccessAt !== undefined && lastCheck?.result === 'failed')
    lines.push(`  last successful check: ${formatTimestamp(record.lastSuccessAt)}`);
  return lines;
}

/** `update --status`: the installed channels, and the problems reading their state. */
export interface ChannelStatus {
  stateDir: string;
  records: ChannelRecord[];
  problems: string[];
  /** Unix seconds: how old each channel's release is. */
  now: number;
}

/** `update --status` for people: a block of lines per installed channel. */
export function channelStatusText(status: ChannelStatus): string {
  const { records, problems, stateDir, now } = status;
  const out: string[] = [];
  if (records.length === 0 && problems.length === 0)
    out.push(`no channels installed in ${stateDir}\n`);
  for (const record of records) out.push(`${channelRecordLines(record, now).join('\n')}\n`);
  return out.join('');
}
