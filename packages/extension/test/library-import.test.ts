import { createEngine } from '@httpsify/engine';
import { DNR_LIMITS, DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { describe, expect, it } from 'vitest';
import type { DnrApi } from '../src/dnr/dnr-api.js';
import { ChannelDnrRuntime } from '../src/dnr-runtime/channel-dnr-runtime.js';
import { RuleWriter } from '../src/dnr/rule-writer.js';
import { RulesetRules } from '../src/dnr-runtime/ruleset-rules.js';
import { TabActivity } from '../src/status/tab-activity.js';
import { SettingsController } from '../src/routing/settings-controller.js';
import type { RulesetIndex, SaveResult } from '../src/protocol/ui-protocol.js';
import { readArchive } from '../src/library/archive.js';
import type { LibraryProgress } from '../src/library/library-compile.js';
import { compileLibraryRules } from '../src/library/library-dnr.js';
import type { LibraryPreview, LibraryStatus } from '../src/library/library-protocol.js';
import { LibraryService } from '../src/library/library-service.js';
import { LIBRARY_BUNDLE_KEY, LIBRARY_LAYER_NAME } from '../src/library/library-store.js';
import { MemoryStorageArea } from './support/memory-storage.js';
import { SettingsStore } from '../src/settings/store.js';
import { rulesetsOf } from './support/channels.js';
import { tar } from './support/tar.js';

const DEFAULTS = createEngine(
  rulesetsOf(
    '<ruleset name="Shared"><target host="shared.test"/><rule from="^http://shared\\.test/" to="https://defaults.shared.test/"/></ruleset>',
    '<ruleset name="Only defaults"><target host="d.test"/><rule from="^http:" to="https:"/></ruleset>',
  ),
);

/** Three good rulesets, one broken file, one ruleset whose pattern the regex door refuses, a README. */
const LIBRARY = tar([
  {
    name: 'rules/Alpha.xml',
    data: '<ruleset name="Alpha"><target host="alpha.example.com"/><rule from="^http:" to="https:"/></ruleset>',
  },
  {
    name: 'rules/Beta.xml',
    data: '<ruleset name="Beta"><target host="beta.test"/><target host="www.beta.test"/><rule from="^http://(www\\.)?beta\\.test/" to="https://secure.beta.test/"/></ruleset>',
  },
  {
    name: 'rules/Shared.xml',
    data: '<ruleset name="Shared"><target host="shared.test"/><rule from="^http://shared\\.test/" to="https://library.shared.test/"/></ruleset>',
  },
  {
    name: 'rules/Broken.xml',
    data: '<ruleset name="Broken">\n  <target host="broken.test">\n</ruleset>',
  },
  {
    name: 'rules/Refused.xml',
    data: '<ruleset name="Refused"><target host="r.test"/>\n<rule from="^http://(\\w+)\\.\\1\\.r\\.test/" to="https://r.test/"/></ruleset>',
  },
  { name: 'README.md', data: 'not a ruleset' },
]);

async function setUp() {
  const area = new MemoryStorageArea();
  const c = new SettingsController(DEFAULTS, new SettingsStore(area), new TabActivity(), {
    overridesApplied: async () => undefined,
    policyChanged: async () => undefined,
  });
  await c.start();
  const service = new LibraryService({
    area,
    apply: (lib) =>
      c.setLibrary(
        lib === null
          ? null
          : { name: LIBRARY_LAYER_NAME, timestamp: lib.timestamp, engine: lib.engine },
      ),
    platformProblem: async () => null,
    bundledNamesForHost: (host) =>
      [...DEFAULTS.candidateRulesets(host)].map((id) => DEFAULTS.rulesetName(id)),
    now: (() => {
      let t = 1_700_000_000_000;
      return () => t++;
    })(),
  });
  await service.start();
  return { area, c, service };
}

/** Chromium's dynamic and session rules, in memory. */
function memoryDnr(): DnrApi & { dynamic: DnrRule[] } {
  return {
    dynamic: [],
    async getDynamicRules() {
      return structuredClone(this.dynamic);
    },
    async getSessionRules() {
      return [];
    },
    async updateSessionRules() {},
    async getEnabledRulesets() {
      return [];
    },
    async updateDynamicRules({ removeRuleIds, addRules }) {
      this.dynamic = [...this.dynamic.filter((r) => !removeRuleIds.includes(r.id)), ...addRules];
    },
    async updateEnabledRulesets() {},
  };
}

/** The page's side: unpack, send in batches, finish; returns the answer and the progress seen. */
async function importArchive(
  service: LibraryService,
  bytes: Uint8Array,
  name: string,
  batch = 2,
  withoutCrossSite = false,
) {
  const contents = readArchive(bytes);
  const progress: LibraryProgress[] = [];
  const onProgress = (p: LibraryProgress) => progress.push(p);
  const { upload } = (await service.handle(
    { type: 'libraryBegin', name, skipped: contents.skipped, problems: contents.problems },
    onProgress,
  )) as {
    upload: number;
  };
  for (let i = 0; i < contents.files.length; i += batch)
    await service.handle(
      { type: 'libraryFiles', upload, files: contents.files.slice(i, i + batch) },
      onProgress,
    );
  const previewed = (await service.handle({ type: 'libraryFinish', upload }, onProgress)) as {
    preview?: LibraryPreview;
  };
  // The page shows the preview; the user chooses "Import".
  const result =
    previewed.preview === undefined
      ? previewed
      : await service.handle({ type: 'libraryApply', upload, withoutCrossSite }, onProgress);
  return {
    result: result as LibraryStatus & { error?: string },
    progress,
    preview: previewed.preview,
  };
}

/** A library as a hostile pull request could make it: one ruleset takes a bank elsewhere, one keeps a bundled site on HTTP. */
const HOSTILE = tar([
  {
    name: 'rules/Fine.xml',
    data: '<ruleset name="Fine"><target host="fine.example.com"/><rule from="^http:" to="https:"/></ruleset>',
  },
  {
    name: 'rules/Away.xml',
    data: '<ruleset name="Away"><target host="bank.example.com"/><rule from="^http://bank\\.example\\.com/" to="https://login.example.net/"/></ruleset>',
  },
  {
    name: 'rules/Plain.xml',
    data: '<ruleset name="Plain"><target host="d.test"/><rule from="^http://d\\.test/" to="http://d.test/x/"/></ruleset>',
  },
]);

describe('a library import shows what it would change before it applies', () => {
  it('lists rulesets that leave their sites or go to HTTP, and the bundled rulesets it overrides; nothing applies before "Import"', async () => {
    const { c, service } = await setUp();
    const contents = readArchive(HOSTILE);
    const { upload } = (await service.handle(
      { type: 'libraryBegin', name: 'pr.tar', skipped: 0, problems: [] },
      () => undefined,
    )) as { upload: number };
    await service.handle({ type: 'libraryFiles', upload, files: contents.files }, () => undefined);
    const { preview } = (await service.handle(
      { type: 'libraryFinish', upload },
      () => undefined,
    )) as { preview: LibraryPreview };
    expect(preview.rulesetCount).toBe(3);
    expect(preview.overrides.names).toEqual(['Only defaults']);
    expect(preview.crossSite.items).toEqual([
      { ruleset: 'Away', rule: '^http://bank\\.example\\.com/ → https://login.example.net/' },
    ]);
    expect(preview.toHttp.items.map((i) => i.ruleset)).toEqual(['Plain']);
    // Previewed only: nothing stored, nothing rewritten.
    expect(c.rewrite('http://bank.example.com/').rewritten).toBeNull();
    expect(
      ((await service.handle({ type: 'libraryStatus' }, () => undefined)) as LibraryStatus).info,
    ).toBeNull();
    // "Import without cross-site rules": the flagged rulesets stay out.
    const status = (await service.handle(
      { type: 'libraryApply', upload, withoutCrossSite: true },
      () => undefined,
    )) as LibraryStatus;
    expect(status.info?.rulesetCount).toBe(1);
    expect(c.rewrite('http://fine.example.com/').rewritten).toBe('https://fine.example.com/');
    expect(c.rewrite('http://bank.example.com/').rewritten).toBeNull();
    expect(c.rewrite('http://d.test/').rewritten).toBe('https://d.test/');
    // The preview is used once.
    expect(
      await service.handle(
        { type: 'libraryApply', upload, withoutCrossSite: false },
        () => undefined,
      ),
    ).toHaveProperty('error');
  });

  it('"Import" applies all of it, as shown', async () => {
    const { c, service } = await setUp();
    const { result, preview } = await importArchive(service, HOSTILE, 'pr.tar', 10, false);
    expect(preview?.crossSite.count).toBe(1);
    expect(result.info?.rulesetCount).toBe(3);
    expect(c.rewrite('http://bank.example.com/').rewritten).toBe('https://login.example.net/');
  });
});

describe('importing a ruleset library in the background', () => {
  it('compiles the good rulesets, reports each bad file with its line, and layers the library before the defaults', async () => {
    const { c, service } = await setUp();
    expect(c.rewrite('http://alpha.example.com/').rewritten).toBeNull();
    const { result, progress } = await importArchive(service, LIBRARY, 'https-everywhere.tar');
    expect(result.info).toMatchObject({
      name: 'https-everywhere.tar',
      fileCount: 5,
      rulesetCount: 3,
      skipped: 1,
      enabled: true,
      importedAt: 1_700_000_000_000,
    });
    const problems = result.info?.problems ?? [];
    expect(problems.find((p) => p.file === 'rules/Broken.xml')?.line).toBeGreaterThan(1);
    expect(problems.find((p) => p.file === 'rules/Refused.xml')).toMatchObject({
      line: 2,
      message: expect.stringMatching(/cannot be run safely/),
    });
    expect(progress.map((p) => p.stage)).toEqual(['parse', 'compile', 'compile', 'store', 'store']);
    expect(progress[0]).toEqual({ stage: 'parse', done: 5, total: 5 });

    expect(c.rewrite('http://alpha.example.com/x')).toEqual({
      rewritten: 'https://alpha.example.com/x',
      ruleset: 'Alpha',
    });
    expect(c.rewrite('http://www.beta.test/y').rewritten).toBe('https://secure.beta.test/y');
    // The library comes before the defaults; the defaults still apply where it has nothing.
    expect(c.rewrite('http://shared.test/').rewritten).toBe('https://library.shared.test/');
    expect(c.rewrite('http://d.test/').rewritten).toBe('https://d.test/');
    expect(c.rewrite('http://r.test/').rewritten).toBeNull();
    // User rules come before it.
    const saved = (await c.handle({
      type: 'userRuleSave',
      xml: '<ruleset name="Mine"><target host="alpha.example.com"/><rule from="^http://alpha\\.example\\.com/" to="https://mine.alpha.example.com/"/></ruleset>',
    })) as SaveResult;
    expect(saved.errors).toEqual([]);
    expect(c.rewrite('http://alpha.example.com/').rewritten).toBe(
      'https://mine.alpha.example.com/',
    );
    // Its rulesets are listed and switchable by name like the others.
    expect(((await c.handle({ type: 'rulesetIndex' })) as RulesetIndex).names).toContain('Beta');
    await c.handle({ type: 'setRuleset', name: 'Beta', active: false });
    expect(c.rewrite('http://beta.test/').rewritten).toBeNull();
  });

  it('survives a restart, switches off and on, is replaced by a new import and removed', async () => {
    const { area, c, service } = await setUp();
    await importArchive(service, LIBRARY, 'first.tar');
    // A new background over the same storage.
    const c2 = new SettingsController(DEFAULTS, new SettingsStore(area), new TabActivity(), {
      overridesApplied: async () => undefined,
      policyChanged: async () => undefined,
    });
    await c2.start();
    const s2 = new LibraryService({
      area,
      apply: (lib) =>
        c2.setLibrary(
          lib && { name: LIBRARY_LAYER_NAME, timestamp: lib.timestamp, engine: lib.engine },
        ),
      platformProblem: async () => null,
    });
    await s2.start();
    expect(c2.rewrite('http://alpha.example.com/').rewritten).toBe('https://alpha.example.com/');

    const off = (await service.handle(
      { type: 'librarySetEnabled', enabled: false },
      () => undefined,
    )) as LibraryStatus;
    expect(off.info?.enabled).toBe(false);
    expect(c.rewrite('http://alpha.example.com/').rewritten).toBeNull();
    await service.handle({ type: 'librarySetEnabled', enabled: true }, () => undefined);
    expect(c.rewrite('http://alpha.example.com/').rewritten).toBe('https://alpha.example.com/');

    const second = tar([
      {
        name: 'Gamma.xml',
        data: '<ruleset name="Gamma"><target host="gamma.test"/><rule from="^http:" to="https:"/></ruleset>',
      },
    ]);
    const { result } = await importArchive(service, second, 'second.tar');
    expect(result.info).toMatchObject({ name: 'second.tar', rulesetCount: 1, problems: [] });
    expect(c.rewrite('http://alpha.example.com/').rewritten).toBeNull();
    expect(c.rewrite('http://gamma.test/').rewritten).toBe('https://gamma.test/');

    const removed = (await service.handle(
      { type: 'libraryRemove' },
      () => undefined,
    )) as LibraryStatus;
    expect(removed.info).toBeNull();
    expect(c.rewrite('http://gamma.test/').rewritten).toBeNull();
    expect(area.data.has(LIBRARY_BUNDLE_KEY)).toBe(false);
  });

  it('changes nothing when an import fails, and says why', async () => {
    const { c, service } = await setUp();
    await importArchive(service, LIBRARY, 'good.tar');
    const onlyBroken = tar([
      { name: 'Broken.xml', data: '<ruleset name="B"><target host="b.test">' },
    ]);
    const { result } = await importArchive(service, onlyBroken, 'bad.tar');
    expect(result.error).toMatch(/none of its files holds a ruleset/);
    const status = (await service.handle(
      { type: 'libraryStatus' },
      () => undefined,
    )) as LibraryStatus;
    expect(status.info?.name).toBe('good.tar');
    expect(c.rewrite('http://alpha.example.com/').rewritten).toBe('https://alpha.example.com/');
    // A file that escapes the library, sent by a page that did not check it, is refused here too.
    const { upload } = (await service.handle(
      { type: 'libraryBegin', name: 'x', skipped: 0, problems: [] },
      () => undefined,
    )) as { upload: number };
    await service.handle(
      {
        type: 'libraryFiles',
        upload,
        files: [
          {
            path: '../Alpha.xml',
            text: '<ruleset name="E"><target host="e.test"/><rule from="^http:" to="https:"/></ruleset>',
          },
        ],
      },
      () => undefined,
    );
    expect(
      (
        (await service.handle({ type: 'libraryFinish', upload }, () => undefined)) as {
          error: string;
        }
      ).error,
    ).toMatch(/no ruleset files/);
    // A stored bundle damaged on disk is reported, not used.
    const area = new MemoryStorageArea();
    area.data.set('localLibrary', status.info);
    area.data.set(LIBRARY_BUNDLE_KEY, 'AAAA');
    const damaged = new LibraryService({
      area,
      apply: async () => undefined,
      platformProblem: async () => null,
    });
    await damaged.start();
    expect((await damaged.status()).problem).toMatch(/does not load/);
  });
});

describe('the library on Chromium', () => {
  const hosts = Array.from({ length: 40 }, (_, i) => `h${i}.test`);
  const rulesets = rulesetsOf(
    ...hosts.map(
      (h, i) =>
        `<ruleset name="R${i}"><target host="${h}"/><rule from="^http://${h.replace('.', '\\.')}/a" to="https://${h}/b"/></ruleset>`,
    ),
  );

  it('applies all of it when it fits, and a part with a clear note when it does not', () => {
    const all = compileLibraryRules(rulesets, { rules: 1000, regexRules: 1000, unsafeRules: 1000 });
    expect(all.ok && all.note).toBe(undefined);
    const need = all.ok ? all.rules.length : 0;
    const part = compileLibraryRules(rulesets, {
      rules: Math.floor(need / 3),
      regexRules: 1000,
      unsafeRules: 1000,
    });
    if (!part.ok) throw new Error(part.reason);
    expect(part.rules.length).toBeLessThanOrEqual(Math.floor(need / 3));
    expect(part.note).toMatch(/on Chromium, \d+ of its 40 rulesets apply fully/);
    // What is applied rewrites exactly as the engine does for the rulesets it kept.
    const emulator = new DnrEmulator(part.rules);
    expect(emulator.match({ url: 'http://h0.test/a', type: 'main_frame' }).redirectUrl).toBe(
      'https://h0.test/b',
    );
    expect(
      compileLibraryRules(rulesets, { rules: 0, regexRules: 0, unsafeRules: 0 }),
    ).toMatchObject({ ok: false });
  });

  it('sends the page loads of the rulesets that do not fit to the handoff page, and names them', () => {
    const page = 'chrome-extension://abc/ui/handoff.html';
    const all = compileLibraryRules(
      rulesets,
      { rules: 1000, regexRules: 1000, unsafeRules: 1000 },
      page,
    );
    const need = all.ok ? all.rules.length : 0;
    const part = compileLibraryRules(
      rulesets,
      { rules: Math.floor(need / 3), regexRules: 1000, unsafeRules: 1000 },
      page,
    );
    if (!part.ok || part.coverage === undefined) throw new Error('expected a partial library');
    const left = part.coverage.pageLoadsOnly;
    expect(left.length).toBeGreaterThan(20);
    expect(part.coverage.inPart).toEqual([]);
    expect(part.note).toContain(`${left.length} apply to page loads only`);
    const emulator = new DnrEmulator(part.rules);
    for (const [i, h] of hosts.entries()) {
      const main = emulator.match({ url: `http://${h}/a`, type: 'main_frame' }).redirectUrl;
      const image = emulator.match({ url: `http://${h}/a`, type: 'image' }).redirectUrl;
      if (left.includes(`R${i}`)) {
        // The page asks the engine; an image of such a site is left alone, never sent elsewhere.
        expect(main).toBe(`${page}?http://${h}/a`);
        expect(image).toBeNull();
      } else {
        expect(main).toBe(`https://${h}/b`);
        expect(image).toBe(`https://${h}/b`);
      }
    }
  });

  it('asks Chromium about every regex before writing, and leaves out a ruleset it refuses one of', async () => {
    const { c, service } = await setUp();
    const regexRuleset = (name: string, host: string) =>
      `<ruleset name="${name}"><target host="${host}"/><rule from="^http://${host.replace('.', '\\.')}/(\\d+)/x" to="https://${host}/$1/y"/></ruleset>`;
    await importArchive(
      service,
      tar([
        { name: 'rules/Gamma.xml', data: regexRuleset('Gamma', 'gamma.test') },
        { name: 'rules/Delta.xml', data: regexRuleset('Delta', 'delta.test') },
      ]),
      'lib.tar',
    );
    const dnr = memoryDnr();
    const page = 'chrome-extension://abc/ui/handoff.html';
    const asked: string[] = [];
    const refuse = (regex: string) => regex.includes('gamma');
    const runtime = new ChannelDnrRuntime(
      new RuleWriter(dnr),
      dnr,
      new MemoryStorageArea(),
      page,
      async ({ regex }) => {
        asked.push(regex);
        return !refuse(regex);
      },
    );
    const state = await runtime.sync(c.channels, false);
    expect(asked.some(refuse)).toBe(true);
    // Each regex is asked about once, and none Chromium refuses is written.
    expect(new Set(asked).size).toBe(asked.length);
    expect(dnr.dynamic.filter((r) => refuse(r.condition.regexFilter ?? ''))).toEqual([]);
    expect(state.applied[LIBRARY_LAYER_NAME]?.coverage?.pageLoadsOnly).toEqual(['Gamma']);
    // The options page gets the names through the library's status.
    const rulesetRules = new RulesetRules(
      new RuleWriter(dnr),
      runtime,
      () => undefined,
      'chrome-extension://test/handoff.html',
    );
    const named = new LibraryService({
      area: new MemoryStorageArea(),
      apply: async () => undefined,
      platformProblem: async () => null,
      pageLoadsOnly: () => rulesetRules.libraryPageLoadsOnly(),
    });
    await importArchive(
      named,
      tar([{ name: 'rules/Gamma.xml', data: regexRuleset('Gamma', 'gamma.test') }]),
      'lib.tar',
    );
    expect(
      ((await named.handle({ type: 'libraryStatus' }, () => undefined)) as LibraryStatus)
        .pageLoadsOnly,
    ).toEqual(['Gamma']);
    const emulator = new DnrEmulator(dnr.dynamic);
    expect(emulator.match({ url: 'http://delta.test/7/x', type: 'image' }).redirectUrl).toBe(
      'https://delta.test/7/y',
    );
    expect(emulator.match({ url: 'http://gamma.test/7/x', type: 'image' }).redirectUrl).toBeNull();
    expect(emulator.match({ url: 'http://gamma.test/7/x', type: 'main_frame' }).redirectUrl).toBe(
      `${page}?http://gamma.test/7/x`,
    );
  });

  it('is compiled into the channel band below the channels and reported as partial', async () => {
    const { c, service } = await setUp();
    await importArchive(service, LIBRARY, 'lib.tar');
    const dnr: DnrApi & { dynamic: DnrRule[] } = {
      dynamic: Array.from({ length: DNR_LIMITS.dynamicRules - 2 }, (_, i) => ({
        id: 5_000_000 + i,
        priority: 1,
        action: { type: 'allow' },
        condition: { urlFilter: `|http://x${i}.test/` },
      })),
      async getDynamicRules() {
        return structuredClone(this.dynamic);
      },
      async getSessionRules() {
        return [];
      },
      async updateSessionRules() {},
      async getEnabledRulesets() {
        return [];
      },
      async updateDynamicRules({ removeRuleIds, addRules }) {
        this.dynamic = [...this.dynamic.filter((r) => !removeRuleIds.includes(r.id)), ...addRules];
      },
      async updateEnabledRulesets() {},
    };
    const runtime = new ChannelDnrRuntime(new RuleWriter(dnr), dnr, new MemoryStorageArea());
    const state = await runtime.sync(c.channels, false);
    expect(state.problems[LIBRARY_LAYER_NAME]).toMatch(
      /on Chromium, [12] of its 3 rulesets apply fully/,
    );
    expect(dnr.dynamic.length).toBeGreaterThan(DNR_LIMITS.dynamicRules - 2);
    expect(dnr.dynamic.length).toBeLessThanOrEqual(DNR_LIMITS.dynamicRules);

    // Importing again replaces the library's rules, also when the name and counts stay the same.
    dnr.dynamic = [];
    const libraryRules = () => dnr.dynamic.map((r) => JSON.stringify(r.condition));
    const roomy = new ChannelDnrRuntime(new RuleWriter(dnr), dnr, new MemoryStorageArea());
    await roomy.sync(c.channels, false);
    expect(libraryRules().join()).toContain('beta');
    await importArchive(
      service,
      tar([
        {
          name: 'rules/Alpha.xml',
          data: '<ruleset name="Alpha"><target host="gamma.example.com"/><rule from="^http:" to="https:"/></ruleset>',
        },
      ]),
      'lib.tar',
    );
    const after = await roomy.sync(c.channels, false);
    expect(after.problems[LIBRARY_LAYER_NAME]).toBeUndefined();
    expect(libraryRules().join()).toContain('gamma.example.com');
    expect(libraryRules().join()).not.toContain('beta');
  });
});
