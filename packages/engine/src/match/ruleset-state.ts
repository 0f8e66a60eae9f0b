import { NONE, RulesetFlag, Section } from '../bundle/format.js';
import type { PackedArray } from '../bundle/packed-array.js';
import type { BundleSections } from '../bundle/read.js';
import type { StringPool } from './string-pool.js';

/**
 * Which rulesets are on, and what the bundle says about each (name, default_off note,
 * platform, flags). `active` and `trivialOnly` are flat byte arrays, updated in place, that the
 * hot path reads per candidate; user overrides are kept by name, as the user gives them.
 */
export class RulesetState {
  readonly rulesetCount: number;
  /** 1 where the ruleset is active now (defaults, mixed-content switch and user overrides). */
  readonly active: Uint8Array;
  /** 1 where RulesetFlag.TrivialOnly is set. */
  readonly trivialOnly: Uint8Array;

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
    this.active = new Uint8Array(this.rulesetCount);
    this.trivialOnly = new Uint8Array(this.rulesetCount);
    this.recomputeActive();
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
    return (flags & RulesetFlag.DefaultOn) !== 0 || (mixedContent && (flags & RulesetFlag.MixedContent) !== 0);
  }

  isTrivialOnly(id: number): boolean {
    return (this.flags.get(id) & RulesetFlag.TrivialOnly) !== 0;
  }

  /** Overrides a ruleset by name (all rulesets of that name); undefined returns it to its default. */
  setActive(name: string, active: boolean | undefined): void {
    if (active === undefined) this.overrides.delete(name);
    else this.overrides.set(name, active);
    for (const id of this.idsByName(name)) this.active[id] = (active ?? this.isDefaultActive(id)) ? 1 : 0;
  }

  activeOverrides(): ReadonlyMap<string, boolean> {
    return this.overrides;
  }

  setMixedContent(on: boolean): void {
    this.mixedContent = on;
    this.recomputeActive();
  }

  /** Why an inactive ruleset is off, in words (for explain). */
  inactiveReason(id: number): string {
    const override = this.overrides.get(this.name(id));
    if (override === false) return 'disabled by the user';
    const note = this.defaultOff(id);
    if (note !== null) return `default_off: ${note}`;
    const platform = this.platform(id);
    if (platform !== null) return `platform="${platform}"${platform === 'mixedcontent' ? ' (mixed-content rulesets are off)' : ''}`;
    return 'off';
  }

  private recomputeActive(): void {
    // The flags column unpacked inline (as PackedArray.get does): this loop runs at load over
    // every ruleset before anything is optimised, where a call per field costs a fresh
    // process ~10 ms on the full corpus.
    const { words, bits } = this.flags;
    const mask = 2 ** bits - 1;
    const on = RulesetFlag.DefaultOn | (this.mixedContent ? RulesetFlag.MixedContent : 0);
    for (let id = 0, bit = 0; id < this.rulesetCount; id++, bit += bits) {
      const w = bit >>> 5;
      const shift = bit & 31;
      let flags = (words[w] as number) >>> shift;
      if (shift + bits > 32) flags |= (words[w + 1] as number) << (32 - shift);
      flags &= mask;
      this.active[id] = (flags & on) !== 0 ? 1 : 0;
      // Unpacked in the pass that reads the flags anyway: the hot path tests it per candidate.
      this.trivialOnly[id] = (flags & RulesetFlag.TrivialOnly) !== 0 ? 1 : 0;
    }
    for (const [name, on] of this.overrides) for (const id of this.idsByName(name)) this.active[id] = on ? 1 : 0;
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
