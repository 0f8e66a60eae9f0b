import { Option, type Command } from '../shared/commander.js';
import {
  type ChannelCheckReport,
  type ChannelDefinition,
  channelFreshness,
  checkChannel,
  fetchBytesWith,
  installedProblem,
} from '@httpsify/engine/channels';
import {
  defaultRulesetsTimestamp,
  defaultStateDir,
  fileChannelStorage,
  readChannelRecords,
  removeChannelLeftovers,
  removeChannelState,
  withStateLock,
} from '@httpsify/engine/node';
import { formatCheckReport, formatRecord } from '../channels/report.js';
import { readChannelFile } from '../channels/signing-key.js';
import { policyFetch } from '../net/policy-fetch.js';
import { collect } from '../shared/rules-option.js';

interface UpdateOptions {
  channel?: string[];
  stateDir?: string;
  status?: boolean;
  remove?: string[];
  format: 'text' | 'json';
  allowPrivate?: boolean;
}

export function registerUpdate(program: Command): void {
  program
    .command('update')
    .description('fetch, verify and install signed rulesets from update channels')
    .option(
      '--channel <file>',
      'channel definition (JSON) to check and install from (repeatable)',
      collect,
    )
    .option(
      '--state-dir <dir>',
      'where installed channel rulesets are kept (default: $XDG_STATE_HOME/httpsify or ~/.local/state/httpsify)',
    )
    .option(
      '--status',
      'list installed channels and their last check (the default without --channel)',
    )
    .option(
      '--remove <name>',
      "delete a channel's installed rulesets and state (repeatable)",
      collect,
    )
    .option(
      '--allow-private',
      'also fetch from loopback, private and link-local addresses (refused by default, also after DNS and redirects)',
    )
    .addOption(
      new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'),
    )
    .action(async (options: UpdateOptions) => {
      const stateDir = options.stateDir ?? defaultStateDir();
      const files = options.channel ?? [];
      const removals = options.remove ?? [];
      if (files.length > 0 || removals.length > 0) {
        // Read every definition before taking the lock: a typo should not keep others waiting.
        const channels = await readChannels(files);
        // One writer at a time; what a killed run left behind is cleared first.
        const waitMs = Number(process.env.HTTPSIFY_LOCK_WAIT_MS ?? '') || undefined;
        await withStateLock(
          stateDir,
          async () => {
            await removeChannelLeftovers(stateDir);
            for (const name of removals) {
              const removed = await removeChannelState(stateDir, name);
              process.stderr.write(
                removed ? `removed channel "${name}"\n` : `no installed channel named "${name}"\n`,
              );
              if (!removed) process.exitCode = 1;
            }
            if (channels.length > 0)
              await runChecks(channels, stateDir, options.format, options.allowPrivate === true);
          },
          { waitMs },
        );
      }
      if (options.status === true || (files.length === 0 && removals.length === 0))
        await printStatus(stateDir, options.format);
    });
}

async function readChannels(files: string[]): Promise<ChannelDefinition[]> {
  // Read every definition first: a typo in one file should not leave the others half-done.
  const channels: ChannelDefinition[] = [];
  for (const file of files) {
    const channel = await readChannelFile(file);
    if (channels.some((c) => c.name === channel.name))
      throw new Error(`${file}: another channel file also uses the name "${channel.name}"`);
    channels.push(channel);
  }
  return channels;
}

async function runChecks(
  channels: ChannelDefinition[],
  stateDir: string,
  format: 'text' | 'json',
  allowPrivate: boolean,
): Promise<void> {
  // Channel files come through the same outbound policy as every other fetch.
  const fetchBytes = fetchBytesWith(policyFetch({ allowPrivate }));
  const reports: ChannelCheckReport[] = [];
  // One channel at a time, each isolated: a failing channel never stops the others.
  for (const channel of channels) {
    const report = await checkChannel(channel, fileChannelStorage(stateDir, channel.name), {
      fetchBytes,
      defaultsTimestamp: defaultRulesetsTimestamp(),
    });
    reports.push(report);
    if (format === 'text') process.stdout.write(`${formatCheckReport(report)}\n`);
  }
  if (format === 'json') process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
  if (reports.some((r) => r.result === 'failed')) process.exitCode = 1;
}

async function printStatus(stateDir: string, format: 'text' | 'json'): Promise<void> {
  const { records, problems } = await readChannelRecords(stateDir);
  const now = Math.floor(Date.now() / 1000);
  if (format === 'json') {
    const summary = records.map((record) => {
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
    process.stdout.write(`${JSON.stringify({ stateDir, channels: summary, problems }, null, 2)}\n`);
  } else {
    if (records.length === 0 && problems.length === 0)
      process.stdout.write(`no channels installed in ${stateDir}\n`);
    for (const record of records) process.stdout.write(`${formatRecord(record, now).join('\n')}\n`);
  }
  for (const problem of problems) process.stderr.write(`httpsify: ${problem}\n`);
  if (problems.length > 0 || records.some((r) => r.lastCheck?.result === 'failed'))
    process.exitCode = 1;
}
