import { compileBundle } from '@httpsify/engine';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RuleWriter } from '../src/dnr/rule-writer.js';
import { LOOP_VERDICTS_KEY } from '../src/https-first/loop-rules.js';
import type { StorageArea } from '../src/platform/browser-api.js';
import { rulesetsOf } from './support/channels.js';
import { fakeBrowser } from './support/fake-browser.js';

const bundle = compileBundle(
  rulesetsOf(
    '<ruleset name="Bounce"><target host="bounce.test"/><rule from="^http:" to="https:"/></ruleset>',
  ),
  { timestamp: 1_700_000_000 },
);

/** Chromium's background entry on a fake browser, its worker woken with verdicts in storage. */
async function wake(closeTabAtWake: boolean) {
  const fake = fakeBrowser('chrome-extension://wake/');
  const ns = fake.ns as unknown as { storage: { session: StorageArea } };
  await ns.storage.session.set({
    [LOOP_VERDICTS_KEY]: [
      {
        kind: 'subresource',
        tabId: 5,
        url: 'http://bounce.test/x.gif',
        until: Date.now() + 60_000,
      },
    ],
  });
  vi.stubGlobal('chrome', fake.ns);
  vi.stubGlobal('HTTPSIFY_TEST_HOOKS', true);
  vi.stubGlobal('addEventListener', () => undefined);
  vi.stubGlobal('fetch', async (url: string) =>
    url.endsWith('rules/default.bundle')
      ? new Response(new Uint8Array(bundle))
      : new Response(JSON.stringify({ domains: [], patterns: [] })),
  );
  vi.resetModules();
  const entry = 'chromium';
  await import(`../src/background/${entry}.ts`);
  // The event that woke the worker: the verdict's tab closed.
  if (closeTabAtWake) fake.event('tabs.onRemoved').fire(5, {});
  const g = globalThis as unknown as {
    httpsifyUi: { controller: Promise<unknown> };
    httpsifyWriter: RuleWriter;
  };
  await g.httpsifyUi.controller;
  await new Promise((r) => setTimeout(r, 50));
  await g.httpsifyWriter.idle();
  const restored = (await g.httpsifyWriter.rules('loops')).length;
  if (!closeTabAtWake) fake.event('tabs.onRemoved').fire(5, {});
  await new Promise((r) => setTimeout(r, 50));
  await g.httpsifyWriter.idle();
  return {
    restored,
    rules: await g.httpsifyWriter.rules('loops'),
    stored: (await ns.storage.session.get([LOOP_VERDICTS_KEY]))[LOOP_VERDICTS_KEY],
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.resetModules();
});

/**
 * Attack (A): a verdict is for one tab and goes when the tab closes. A stopped Chromium worker
 * is woken by the tab's closing; the listener runs at once, on a guard whose verdicts are not
 * restored yet (that waits for the rulesets to load), finds nothing to drop, and the restore
 * then brings the closed tab's verdict back: its rule, its stored copy and its host's cookie
 * exemption (isHostBlocked) last their ten minutes.
 */
describe('attack: a tab closing wakes the worker, and its loop verdict stays', () => {
  it('control: a tab closing while the worker runs takes its verdict with it', async () => {
    const { restored, rules, stored } = await wake(false);
    expect(restored).toBe(1);
    expect(rules).toEqual([]);
    expect(stored).toEqual([]);
  });

  it('the tab whose closing woke the worker takes its verdict with it too', async () => {
    const { rules, stored } = await wake(true);
    expect(stored).toEqual([]);
    expect(rules).toEqual([]);
  });
});
