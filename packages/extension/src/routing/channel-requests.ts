/**
 * The options page's requests about update channels: the list (definition, installed bundle,
 * checks and this browser's problems), adding a pasted definition, removing, checking now.
 */
import { parseChannelDefinition } from '@httpsify/engine/channels';
import type { ChannelAddResult, ChannelRow } from '../protocol/ui-protocol.js';
import type { SettingsWriter } from './settings-requests.js';
import type { Settings } from '../settings/schema.js';
import { channelNameProblem } from '../settings/channel-name.js';
import type { ChannelStatus } from '../channels/channel-service.js';

/** What the settings need from the channel machinery (ChannelService plus the platform). */
export interface ChannelHooks<Owner = unknown> {
  /** Timestamp of the packaged default bundle. */
  defaultsTimestamp: number;
  /** The subscribed channels in the settings changed (runs in the background; may start checks). */
  definitionsChanged(definitions: Settings['channels']): Promise<void>;
  status(): ChannelStatus[];
  checkNow(name?: string): Promise<void>;
  /** New engines are in place (bundle installed, switches changed): Chromium recompiles its rules. */
  layersApplied(owner: Owner): Promise<void>;
  /** Per channel, why this browser does not (fully) apply it. */
  platformProblems(): Promise<Record<string, string>>;
}

/** What the requests read and write: the settings, the hooks and the layers' own problems. */
export interface ChannelRequestContext extends SettingsWriter {
  readonly channelHooks: ChannelHooks | undefined;
  /** Per channel, why its bundle is not used (from the layers). */
  readonly layerProblems: ReadonlyMap<string, string>;
  /** The last definitionsChanged hand-over has run its course. */
  channelsSettled(): Promise<void>;
}

/** A channel added by definition or address whose name is taken (settings/channel-name.ts). */
class ChannelNameTaken extends Error {}

/**
 * The channels as the options page shows them. A stored bundle the layers could not load (it
 * failed verification as it was read back) is not in use: it shows as such, with the reason,
 * and not as installed; it is not this browser's problem either.
 */
export async function channelRows(ctx: ChannelRequestContext): Promise<ChannelRow[]> {
  const hooks = ctx.channelHooks;
  if (hooks === undefined) return [];
  const problems = await hooks.platformProblems();
  return hooks.status().map((status) => {
    const row: ChannelRow = { ...status, platformProblem: problems[status.name] ?? null };
    const damaged = ctx.layerProblems.get(status.name);
    if (damaged === undefined || status.installed === null) return row;
    return {
      ...row,
      installed: null,
      stale: false,
      notInUse: { reason: 'damaged', detail: damaged },
      platformProblem: null,
    };
  });
}

/** A definition pasted as JSON: refused with the parser's message, or added (and checked at once). */
/**
 * A pasted definition, checked and described but not added: the options page asks the user to
 * confirm it by name, as a channel from a settings file is (settings/import-plan.ts).
 */
export function previewChannel(
  ctx: ChannelRequestContext,
  json: string,
):
  | { ok: true; name: string; urlPrefix: string; scope: string; replacesDefaults: boolean }
  | { ok: false; error: string } {
  let channel: Settings['channels'][number];
  try {
    channel = parseChannelDefinition(JSON.parse(json));
  } catch (e) {
    return {
      ok: false,
      error:
        e instanceof SyntaxError
          ? `not JSON: ${e.message}`
          : e instanceof Error
            ? e.message
            : String(e),
    };
  }
  const problem = channelNameProblem(
    channel.name,
    ctx.settings.channels.map((c) => c.name),
  );
  if (problem !== null)
    return {
      ok: false,
      error: `a channel cannot be named ${JSON.stringify(channel.name)}: ${problem}`,
    };
  return {
    ok: true,
    name: channel.name,
    urlPrefix: channel.urlPrefix,
    scope: channel.scope ?? '',
    replacesDefaults: channel.replacesDefaults === true,
  };
}

export async function addChannel(
  ctx: ChannelRequestContext,
  json: string,
): Promise<ChannelAddResult> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (e) {
    return { ok: false, error: `not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  let channel: Settings['channels'][number];
  try {
    channel = parseChannelDefinition(value);
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
  let settings: Settings;
  try {
    // Inside the settings lock: another window may have added a channel meanwhile.
    settings = await ctx.update((s) => {
      const problem = channelNameProblem(
        channel.name,
        s.channels.map((c) => c.name),
      );
      if (problem !== null)
        throw new ChannelNameTaken(
          `a channel cannot be named ${JSON.stringify(channel.name)}: ${problem}`,
        );
      return { channels: [...s.channels, channel] };
    });
  } catch (e) {
    if (e instanceof ChannelNameTaken) return { ok: false, error: e.message };
    throw e;
  }
  await ctx.channelsSettled();
  return { ok: true, settings, channels: await channelRows(ctx) };
}

export async function removeChannel(
  ctx: ChannelRequestContext,
  name: string,
): Promise<ChannelRow[] | { error: string }> {
  if (!ctx.settings.channels.some((c) => c.name === name))
    return { error: `no channel named ${name}` };
  await ctx.update((s) => ({ channels: s.channels.filter((c) => c.name !== name) }));
  await ctx.channelsSettled();
  return channelRows(ctx);
}

export async function checkChannel(
  ctx: ChannelRequestContext,
  name: string | undefined,
): Promise<ChannelRow[] | { error: string }> {
  const hooks = ctx.channelHooks;
  if (hooks === undefined) return { error: 'update channels are not available here' };
  if (name !== undefined && !ctx.settings.channels.some((c) => c.name === name))
    return { error: `no channel named ${name}` };
  await ctx.channelsSettled();
  await hooks.checkNow(name);
  return channelRows(ctx);
}
