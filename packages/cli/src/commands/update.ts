import { Option, type Command } from '../shared/commander.js';
import {
  type ChannelCheckReport,
  type ChannelDefinition,
  checkChannel,
  fetchBytesWith,
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
import { channelChecksJson, channelStatusJson } from '../formats/json/channels.js';
import {
  channelCheckLine,
  channelStatusText,
  type ChannelStatus,
} from '../formats/text/channels.js';
import { emitReport, type Formatters } from '../shared/emit-report.js';
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
    // Text tells each channel's outcome as it comes; JSON is one document at the end.
    if (format === 'text') process.stdout.write(`${channelCheckLine(report)}\n`);
  }
  if (format === 'json') process.stdout.write(channelChecksJson(reports));
  if (reports.some((r) => r.result === 'failed')) process.exitCode = 1;
}

async function printStatus(stateDir: string, format: 'text' | 'json'): Promise<void> {
  const { records, problems } = await readChannelRecords(stateDir);
  const status: ChannelStatus = { stateDir, records, problems, now: Math.floor(Date.now() / 1000) };
  await emitReport(STATUS_FORMATS, format, status);
  for (const problem of problems) process.stderr.write(`httpsify: ${problem}\n`);
  if (problems.length > 0 || records.some((r) => r.lastCheck?.result === 'failed'))
    process.exitCode = 1;
}

const STATUS_FORMATS: Formatters<ChannelStatus, 'text' | 'json'> = {
  text: channelStatusText,
  json: channelStatusJson,
};
