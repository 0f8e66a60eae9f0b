import {
  channelBinding,
  ChannelError,
  channelFreshness,
  checkChannel,
  installedProblem,
  usableInstalled,
  type ChannelCheckReport,
  type ChannelDefinition,
  type ChannelRecord,
  type ChannelStorage,
  type FetchBytes,
  type LastCheck,
  secondsUntilChannelCheck,
} from '@httpsify/engine/channels';
import { loadBundle } from '@httpsify/engine';
import type { StorageArea } from '../platform/browser-api.js';
import {
  removeChannelRecords,
  storageChannelStorage,
  storedChannelNames,
} from './channel-storage.js';
import { latestCheck, planChannelChecks } from './check-schedule.js';

/** The one alarm that wakes the background for channel checks. */
export const CHANNEL_ALARM = 'httpsify-channel-check';
/** If a check could not move a channel's due time (clock trouble), try again after this long instead of looping. */
const STUCK_RETRY_SECONDS = 60;

/** The part of `chrome.alarms` used here. */
export interface AlarmsLike {
  create(name: string, info: { when: number }): Promise<void> | void;
  clear(name: string): Promise<boolean> | void;
}

export interface ChannelServiceDeps {
  area: StorageArea;
  alarms: AlarmsLike;
  fetchBytes: FetchBytes;
  /** Unix seconds. */
  now?: () => number;
  /** Timestamp of the packaged default bundle (a replacing channel must not be older). */
  defaultsTimestamp?: number;
  /**
   * The installed bundles (or the definitions they apply under) changed: rebuild what rewrites
   * with them. Records are in settings order, each carrying its current definition.
   */
  installedChanged(records: ChannelRecord[]): Promise<void>;
}

/** What the options page shows per channel. */
export interface ChannelStatus {
  name: string;
  urlPrefix: string;
  scope: string;
  replacesDefaults: boolean;
  /**
   * The bundle in use. Null when none is, also when one is stored but cannot be used
   * (`notInUse`): a bundle that is not in use is never counted as installed.
   */
  installed: { timestamp: number; rulesetCount: number; installedAt: number } | null;
  /**
   * A stored bundle that is not in use, and why: `untrusted` (its signing key was revoked, or
   * it was verified for another definition of the channel) or `damaged` (it fails
   * verification as it is read back: the saved copy changed since it was checked, which the
   * options page learns from the layers, routing/channel-requests.ts). `detail`: the raw
   * reason, for "Details".
   */
  notInUse: { reason: 'untrusted' | 'damaged'; detail: string } | null;
  /** The installed rules are older than the channel's maximum age (they still apply). */
  stale: boolean;
  maxAgeDays: number;
  lastCheck: LastCheck | null;
  lastSuccessAt: number | null;
  /** Unix seconds; at or before now means "due". */
  nextCheckAt: number;
  checking: boolean;
  /** The stored state could not be read (it is replaced by the next check). */
  storageProblem: string | null;
}

/**
 * Keeps the subscribed channels checked: once a day (an hour after a failure), catching up at
 * once when a due time passed while the browser was closed. Checks and changes of the channel
 * list run one at a time, so a removed channel's record cannot be written back by a check
 * that was still running, and one channel is never checked twice at once.
 */
export class ChannelService {
  private definitions: ChannelDefinition[] = [];
  private readonly records = new Map<string, ChannelRecord>();
  private readonly storageProblems = new Map<string, string>();
  /** Checks whose record could not be saved still count for the schedule. */
  private readonly attempts = new Map<string, LastCheck>();
  private readonly running = new Map<string, Promise<ChannelCheckReport>>();
  private queue: Promise<unknown> = Promise.resolve();
  private emitted = '';
  /** The latest definitions' stored bundles handed over (storedApplied). */
  private stored: Promise<void> = Promise.resolve();
  private readonly now: () => number;

  constructor(private readonly deps: ChannelServiceDeps) {
    this.now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  }

  /**
   * The subscribed channels changed (or the background started): forget the state of removed
   * channels, load the others, apply what is installed and schedule the next checks.
   */
  async setDefinitions(definitions: readonly ChannelDefinition[]): Promise<void> {
    const applied = this.enqueue(async () => {
      const wanted = new Map(definitions.map((d) => [d.name, d]));
      await removeChannelRecords(
        this.deps.area,
        (await storedChannelNames(this.deps.area)).filter((name) => !wanted.has(name)),
      );
      for (const name of new Set([
        ...this.records.keys(),
        ...this.storageProblems.keys(),
        ...this.attempts.keys(),
      ])) {
        if (!wanted.has(name)) this.forget(name);
      }
      this.definitions = [...definitions];
      for (const def of this.definitions) {
        const cached = this.records.get(def.name);
        if (cached === undefined || !sameSource(cached.channel, def))
          await this.reload(def.name, def);
        else this.records.set(def.name, { ...cached, channel: def });
      }
      await this.emitIfChanged();
    });
    this.stored = applied.catch(() => undefined);
    await applied;
    await this.schedule();
  }

  /**
   * Resolves once the latest definitions' stored bundles are verified and handed over
   * (`installedChanged`); not the checks that may follow over the network. What a waking
   * background decides with the channels waits for this.
   */
  storedApplied(): Promise<void> {
    return this.stored;
  }

  /** "Check now": one channel or all, whatever their schedule says. Resolves when done. */
  async checkNow(name?: string): Promise<ChannelCheckReport[]> {
    const names = name === undefined ? this.definitions.map((d) => d.name) : [name];
    const reports = await Promise.all(names.map((n) => this.check(n)));
    await this.schedule();
    return reports;
  }

  /** The alarm fired (or the background woke up): check what is due and re-arm. */
  async onAlarm(): Promise<void> {
    await this.schedule();
  }

  status(): ChannelStatus[] {
    const now = this.now();
    return this.definitions.map((def) => {
      const record = this.records.get(def.name);
      const lastCheck = this.lastCheckOf(def.name);
      const installed = usableInstalled(def, record);
      const untrusted = installedProblem(def, record);
      return {
        name: def.name,
        urlPrefix: def.urlPrefix,
        scope: def.scope,
        replacesDefaults: def.replacesDefaults,
        installed: installed
          ? {
              timestamp: installed.timestamp,
              rulesetCount: installed.rulesetCount,
              installedAt: installed.installedAt,
            }
          : null,
        notInUse: untrusted === null ? null : { reason: 'untrusted', detail: untrusted },
        stale: channelFreshness(def, record, now).stale,
        maxAgeDays: def.maxAgeDays,
        lastCheck: lastCheck ?? null,
        lastSuccessAt: record?.lastSuccessAt ?? null,
        nextCheckAt: now + secondsUntilChannelCheck(lastCheck, now),
        checking: this.running.has(def.name),
        storageProblem: this.storageProblems.get(def.name) ?? null,
      };
    });
  }

  /** Resolves once every queued check and change has finished (tests, and the options page after "Check now"). */
  async idle(): Promise<void> {
    await this.queue;
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private check(name: string): Promise<ChannelCheckReport> {
    const already = this.running.get(name);
    if (already !== undefined) return already;
    const run = this.enqueue(async () => {
      const def = this.definitions.find((d) => d.name === name);
      if (def === undefined)
        return {
          channel: name,
          result: 'failed' as const,
          error: { code: 'internal' as const, message: `no channel named "${name}"` },
        };
      const startedAt = this.now();
      const report = await checkChannel(def, this.storageFor(name), {
        fetchBytes: this.deps.fetchBytes,
        now: this.now,
        defaultsTimestamp: this.deps.defaultsTimestamp,
      });
      this.attempts.set(
        name,
        report.error
          ? { at: startedAt, result: report.result, error: report.error }
          : { at: startedAt, result: report.result },
      );
      await this.reload(name, def);
      // A release installed again under the same timestamp (its saved copy was damaged) is
      // new bytes all the same: hand it over.
      await this.emitIfChanged(report.result === 'updated');
      return report;
    });
    this.running.set(name, run);
    void run.finally(() => this.running.delete(name)).catch(() => undefined);
    return run;
  }

  /**
   * Damaged stored state reads as "nothing installed", so the check installs afresh instead of
   * failing forever; so does a stored bundle that no longer verifies, which the check would
   * otherwise call current (same timestamp) and keep.
   */
  private storageFor(name: string): ChannelStorage {
    const storage = storageChannelStorage(this.deps.area, name);
    return {
      load: async () => {
        try {
          return withoutDamagedBundle(await storage.load());
        } catch (err) {
          if (!(err instanceof ChannelError)) throw err;
          this.storageProblems.set(name, err.message);
          return undefined;
        }
      },
      save: async (record) => {
        await storage.save(record);
        this.storageProblems.delete(name);
      },
    };
  }

  private async reload(name: string, def: ChannelDefinition): Promise<void> {
    let record: ChannelRecord | undefined;
    try {
      record = await storageChannelStorage(this.deps.area, name).load();
    } catch (err) {
      this.records.delete(name);
      this.storageProblems.set(name, err instanceof Error ? err.message : String(err));
      return;
    }
    if (record !== undefined && !sameSource(record.channel, def)) {
      // A bundle verified for another server or key is not this channel's: start over.
      await removeChannelRecords(this.deps.area, [name]);
      this.forget(name);
      return;
    }
    if (record === undefined) this.records.delete(name);
    // The bundle applies under the definition in the settings (scope, replacesDefaults).
    else this.records.set(name, { ...record, channel: def });
    if (record !== undefined) this.storageProblems.delete(name);
  }

  private forget(name: string): void {
    this.records.delete(name);
    this.storageProblems.delete(name);
    this.attempts.delete(name);
  }

  private lastCheckOf(name: string): LastCheck | undefined {
    return latestCheck(this.records.get(name)?.lastCheck, this.attempts.get(name));
  }

  private async emitIfChanged(force = false): Promise<void> {
    const records = this.definitions.flatMap((d) => {
      const r = this.records.get(d.name);
      return r === undefined ? [] : [r];
    });
    const key = JSON.stringify(
      records.map((r) => [
        channelBinding(r.channel),
        r.channel.replacesDefaults,
        usableInstalled(r.channel, r)?.timestamp ?? null,
      ]),
    );
    if (key === this.emitted && !force) return;
    await this.deps.installedChanged(records);
    this.emitted = key;
  }

  private async schedule(firstRound = true): Promise<void> {
    const now = this.now();
    const plan = planChannelChecks(
      this.definitions.map((d) => ({ name: d.name, lastCheck: this.lastCheckOf(d.name) })),
      now,
    );
    if (plan.due.length > 0 && firstRound) {
      await Promise.all(plan.due.map((n) => this.check(n)));
      return this.schedule(false);
    }
    const nextAt = plan.due.length > 0 ? now + STUCK_RETRY_SECONDS : plan.nextAt;
    if (nextAt === null) await this.deps.alarms.clear(CHANNEL_ALARM);
    else await this.deps.alarms.create(CHANNEL_ALARM, { when: nextAt * 1000 });
  }
}

/**
 * The record without its installed bundle if that bundle fails full verification (checksum and
 * structure, as the layers load it), else the record as it is.
 */
function withoutDamagedBundle(record: ChannelRecord | undefined): ChannelRecord | undefined {
  if (record?.installed === undefined) return record;
  try {
    loadBundle(record.installed.bundle);
    return record;
  } catch {
    const { installed: _damaged, ...rest } = record;
    return rest;
  }
}

/**
 * Whether stored state still belongs to a definition: same name, server, scope, destinations and
 * root key (what the signature binds). Otherwise its bundle was verified for something else.
 */
function sameSource(a: ChannelDefinition, b: ChannelDefinition): boolean {
  return channelBinding(a) === channelBinding(b);
}
