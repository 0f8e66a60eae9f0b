import { NONE, RulesetFlag, Section } from '../bundle/format.js';
import type { PackedArray } from '../bundle/packed-array.js';
import type { BundleSections } from '../bundle/read.js';
import type { StringPool } from './string-pool.js';

/** Bits of a ruleset's byte in RulesetState.state. */
export const enum RulesetBit {
  /** The byte has been worked out (0: not yet; see settle). */
  Settled = 1,
  /** The ruleset is on now (defaults, mixed-content switch and user overrides). */
  Active = 2,
  /** RulesetFlag.TrivialOnly: its only rule is `^http:` → `https:`, with no exclusion. */
  TrivialOnly = 4,
}

/** Values of RulesetState.override: none, or the user's on / off. */
const enum Override {
  None = 0,
  On = 1,
  Off = 2,
}

/**
 * Which rulesets are on, and what the bundle says about each (name, default_off note,
 * platform, flags). The hot path reads one byte per candidate from `state`, worked out from
 * the packed flags the first time the ruleset comes up (`settle`): loading does nothing per
 * ruleset, so a fresh process does not spend milliseconds on 24k rulesets before its first URL.
 * User overrides are kept by name, as the user gives them, and per id in `override`.
 */
export class RulesetState {
  readonly rulesetCount: number;
  /** Per ruleset: 0 until settled, then RulesetBit flags. Reset to 0 whenever what decides it changes. */
  readonly state: Uint8Array;

  private readonly strings: StringPool;
  private readonly flags: PackedArray;
  private readonly nameString: PackedArray;
  /** default_off notes, sparse: ascending ruleset ids and, in step, their note strings. */
  private readonly noteOwner: PackedArray;
  private readonly noteString: PackedArray;
  /** platform attributes, sparse like the notes. */
  private readonly platformOwner: PackedArray;
  private readonly platformString: PackedArray;
  private readonly overrides = new Map<string, boolean>();
  /** Per ruleset id, the user's override (Override); allocated by the first override. */
  private override: Uint8Array | null = null;
  private mixedContent: boolean;
  private idsByNameIndex: Map<string, number[]> | null = null;

  constructor({ header, packed }: BundleSections, strings: StringPool, mixedContent: boolean) {
    this.rulesetCount = header.rulesetCount;
    this.strings = strings;
    this.flags = packed[Section.RsFlags] as PackedArray;
    this.nameString = packed[Section.RsName] as PackedArray;
    this.noteOwner = packed[Section.NoteOwner] as PackedArray;
    this.noteString = packed[Section.Note] as PackedArray;
    this.platformOwner = packed[Section.PlatformOwner] as PackedArray;
    this.platformString = packed[Section.Platform] as PackedArray;
    this.mixedContent = mixedContent;
    this.state = new Uint8Array(this.rulesetCount);
  }

  /** Works out ruleset `id`'s byte of `state` (RulesetBit flags, Settled set), stores and returns it. */
  settle(id: number): number {
    const flags = this.flags.get(id);
    const override = this.override === null ? Override.None : (this.override[id] as number);
    const active = override === Override.None ? this.isDefaultActive(id) : override === Override.On;
    const bits =
      RulesetBit.Settled |
      (active ? RulesetBit.Active : 0) |
      ((flags & RulesetFlag.TrivialOnly) !== 0 ? RulesetBit.TrivialOnly : 0);
    this.state[id] = bits;
    return bits;
  }

  /** Whether ruleset `id` is on now. */
  isActive(id: number): boolean {
    return ((this.state[id] || this.settle(id)) & RulesetBit.Active) !== 0;
  }

  name(id: number): string {
    return this.strings.cached(this.nameString.get(id));
  }

  idsByName(name: string): number[] {
    if (this.idsByNameIndex === null) {
      this.idsByNameIndex = new Map();
      for (let id = 0; id < this.rulesetCount; id++) {
        const n = this.name(id);
        const ids = this.idsByNameIndex.get(n);
        if (ids === undefined) this.idsByNameIndex.set(n, [id]);
        else ids.push(id);
      }
    }
    return this.idsByNameIndex.get(name) ?? [];
  }

  /** The ruleset's default_off note, or null when it has none. */
  defaultOff(id: number): string | null {
    const note = sparseLookup(this.noteOwner, this.noteString, id);
    return note === NONE ? null : this.strings.cached(note);
  }

  /** The ruleset's platform attribute, or null when it has none. */
  platform(id: number): string | null {
    const platform = sparseLookup(this.platformOwner, this.platformString, id);
    return platform === NONE ? null : this.strings.cached(platform);
  }

  /** Whether the ruleset is on before any user override (with the mixed-content switch as set, or as given). */
  isDefaultActive(id: number, mixedContent = this.mixedContent): boolean {
    const flags = this.flags.get(id);
    return (
      (flags & RulesetFlag.DefaultOn) !== 0 ||
      (mixedContent && (flags & RulesetFlag.MixedContent) !== 0)
    );
  }

  isTrivialOnly(id: number): boolean {
    return (this.flags.get(id) & RulesetFlag.TrivialOnly) !== 0;
  }

  /** Overrides a ruleset by name (all rulesets of that name); undefined returns it to its default. */
  setActive(name: string, active: boolean | undefined): void {
    if (active === undefined) this.overrides.delete(name);
    else this.overrides.set(name, active);
    const ids = this.idsByName(name);
    if (ids.length === 0) return;
    const override = this.override ?? (this.override = new Uint8Array(this.rulesetCount));
    for (const id of ids) {
      override[id] = active === undefined ? Override.None : active ? Override.On : Override.Off;
      this.state[id] = 0;
    }
  }

  activeOverrides(): ReadonlyMap<string, boolean> {
    return this.overrides;
  }

  setMixedContent(on: boolean): void {
    this.mixedContent = on;
    // Every byte settles again, lazily, against the new switch (a native fill, not a loop).
    this.state.fill(0);
  }

  /** Why an inactive ruleset is off, in words (for explain). */
  inactiveReason(id: number): string {
    const override = this.overrides.get(this.name(id));
    if (override === false) return 'disabled by the user';
    const note = this.defaultOff(id);
    if (note !== null) return `default_off: ${note}`;
    const platform = this.platform(id);
    if (platform !== null)
      return `platform="${platform}"${platform === 'mixedcontent' ? ' (mixed-content rulesets are off)' : ''}`;
    return 'off';
  }
}

/** The value paired with ruleset `id` in a sparse (ascending owners, values) section, or NONE. */
function sparseLookup(owners: PackedArray, values: PackedArray, id: number): number {
  let lo = 0;
  let hi = owners.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const owner = owners.get(mid);
    if (owner === id) return values.get(mid);
    if (owner < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return NONE;
}
