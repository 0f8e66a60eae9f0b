import { describe, expect, it, vi } from 'vitest';
import { ChannelError } from '../src/channels/errors.js';
import type { Ruleset } from '../src/model/ruleset.js';

// Counts compilations: a delta must be refused before its result is built, not after.
const compiled = vi.hoisted(() => ({ count: 0 }));
vi.mock('../src/bundle/write.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/bundle/write.js')>();
  return {
    ...real,
    compileBundle: (...args: Parameters<typeof real.compileBundle>) => {
      compiled.count++;
      return real.compileBundle(...args);
    },
  };
});

const { compileBundle } = await import('../src/bundle/write.js');
const { applyDelta, makeDelta } = await import('../src/channels/delta.js');

const ruleset = (i: number): Ruleset => ({
  name: `Site ${i}`,
  targets: [{ host: `site-${i}.example` }],
  rules: [{ from: `^http://site-${i}\\.example/`, to: `https://site-${i}.example/` }],
  exclusions: [],
  secureCookies: [],
  tests: [],
});

describe('channel deltas: bounds before work', () => {
  it('refuses a delta whose result cannot fit the signed length before compiling it', () => {
    const base = compileBundle(
      Array.from({ length: 3 }, (_, i) => ruleset(i)),
      { timestamp: 1 },
    );
    // What a stolen online key could sign: 3,000 new rulesets, and a release claiming 2 KB.
    const target = compileBundle(
      Array.from({ length: 3000 }, (_, i) => ruleset(i)),
      { timestamp: 2 },
    );
    const delta = makeDelta(base, target);
    const before = compiled.count;
    let error: unknown;
    try {
      applyDelta(base, delta, { timestamp: 2, maxBytes: 2048 });
    } catch (err) {
      error = err;
    }
    expect(compiled.count).toBe(before);
    expect(error).toBeInstanceOf(ChannelError);
    expect((error as Error).message).toMatch(
      /at least \d+ bytes, more than the 2048 of the signed release/,
    );
    // The same delta with the honest length rebuilds the target.
    expect(applyDelta(base, delta, { timestamp: 2, maxBytes: target.length })).toEqual(target);
  });
});
