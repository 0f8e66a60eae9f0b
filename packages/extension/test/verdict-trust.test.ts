import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, loadBundle } from '@httpsify/engine';
import { channelBinding, type ChannelRecord } from '@httpsify/engine/channels';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CATASTROPHIC_FROM,
  forgeProvenVerdict,
  HOSTILE_RULESET,
  HOSTILE_URL,
} from '../../engine/test/support/forged-verdicts.js';
import { buildExtension } from '../src/packaging/build.js';
import { buildChannelLayers } from '../src/channels/channel-layers.js';
import { loadLibrary, saveLibrary } from '../src/library/library-store.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { placeholderChannel } from './support/channels.js';

/**
 * A bundle that calls a catastrophic regex "proven linear" reaches the extension through a
 * channel, the imported library's storage, or as the input of a build: in every case the
 * pattern is judged again (refused), and only the build's own bundle is loaded trusting verdicts.
 */
const forged = forgeProvenVerdict([HOSTILE_RULESET], 0, 1_700_000_000);
const defaults = createEngine([]);

describe('hostile regex verdicts in the extension', () => {
  it('the forgery works on a load that trusts verdicts (so the cases below can fail)', () => {
    expect(loadBundle(forged, { trustBundledRegexVerdicts: true }).rewrite(HOSTILE_URL)).toBe(
      'https://evil.example/',
    );
  });

  it('a channel bundle is judged again', () => {
    const channel = placeholderChannel({ name: 'Evil', urlPrefix: 'https://c.test/', scope: '' });
    const record: ChannelRecord = {
      channel,
      installed: {
        timestamp: 1_700_000_000,
        bundle: forged,
        rulesetCount: 1,
        installedAt: 1_700_000_000,
        keyVersion: 1,
        verifiedFor: channelBinding(channel),
      },
    };
    const layers = buildChannelLayers([record], defaults);
    expect(layers.problems.size).toBe(0);
    expect(layers.scoped.rewrite(HOSTILE_URL)).toBeNull();
  });

  it('a stored library is judged again', async () => {
    const area = new MemoryStorageArea();
    const info = {
      name: 'evil.zip',
      fileCount: 1,
      rulesetCount: 1,
      skipped: 0,
      importedAt: 0,
      enabled: true,
      problems: [],
      moreProblems: 0,
    };
    await saveLibrary(area, info, forged);
    const { library, problem } = await loadLibrary(area);
    expect(problem).toBeNull();
    expect(library?.engine.rewrite(HOSTILE_URL)).toBeNull();
    expect(library?.engine.takeRegexRefusals().map((r) => r.pattern)).toEqual([CATASTROPHIC_FROM]);
  });

  describe('a build given the forged bundle as its rulesets', () => {
    const dir = mkdtempSync(join(tmpdir(), 'httpsify-verdict-build-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('ships verdicts it worked out itself: the packaged load refuses the pattern', async () => {
      const input = join(dir, 'evil.bundle');
      writeFileSync(input, forged);
      const built = await buildExtension({
        rulesets: [input],
        outDir: join(dir, 'out'),
        browsers: ['firefox'],
        zip: false,
      });
      const shipped = new Uint8Array(
        readFileSync(join(built.dirs.firefox as string, 'rules/default.bundle')),
      );
      // Loaded exactly as rewriter/engine-loader.ts loads the packaged defaults.
      const engine = loadBundle(shipped, { verify: 'trusted', trustBundledRegexVerdicts: true });
      expect(engine.rewrite(HOSTILE_URL)).toBeNull();
      expect(engine.takeRegexRefusals().map((r) => r.pattern)).toEqual([CATASTROPHIC_FROM]);
    });
  });
});
