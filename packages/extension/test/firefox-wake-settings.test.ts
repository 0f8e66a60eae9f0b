import { compileBundle } from '@httpsify/engine';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rulesetsOf } from './support/channels.js';
import { fakeBrowser, type FakeBrowser } from './support/fake-browser.js';
import type { MemoryStorageArea } from './support/memory-storage.js';

/**
 * Firefox's background is an event page: the request that wakes it (the first navigation after
 * it idled out, a session restore) arrives while the settings are still being read. Its answer
 * must be what decide() says with the user's stored settings, as the same request gets a
 * moment later: answered over the bundled rulesets alone, it ignored HTTPS-first, the global
 * switch and the sites switched off (found by an attack: in real Firefox ESR the first page
 * after 30 s idle stayed on HTTP under HTTPS-first).
 */
const DEFAULTS = rulesetsOf(
  '<ruleset name="Example"><target host="example.org"/><rule from="^http:" to="https:"/></ruleset>',
);
const bundle = compileBundle(DEFAULTS, { timestamp: 1_700_000_000 });

async function wake(stored: Record<string, unknown>): Promise<FakeBrowser> {
  const fake = fakeBrowser('moz-extension://wake/');
  const local = (fake.ns as unknown as { storage: { local: MemoryStorageArea } }).storage.local;
  await local.set(stored);
  vi.stubGlobal('browser', fake.ns);
  vi.stubGlobal('HTTPSIFY_TEST_HOOKS', true);
  vi.stubGlobal('fetch', async (url: string) =>
    url.endsWith('rules/default.bundle')
      ? new Response(new Uint8Array(bundle))
      : new Response(JSON.stringify({ domains: [], patterns: [] })),
  );
  vi.resetModules();
  await import('../src/background/firefox.js');
  return fake;
}

async function answer(fake: FakeBrowser, d: Record<string, unknown>): Promise<unknown> {
  const answers = await Promise.all(fake.event('webRequest.onBeforeRequest').fire(d));
  return answers.find((a) => a !== undefined);
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.resetModules();
});

const ui = () =>
  (globalThis as unknown as { httpsifyUi: { controller: Promise<unknown> } }).httpsifyUi;

const nav = (id: string, url: string) => ({
  requestId: id,
  tabId: 3,
  frameId: 0,
  type: 'main_frame',
  url,
});

describe('Firefox: the request that wakes the background is decided with the settings', () => {
  it('HTTPS-first (on by default) upgrades the navigation that woke the background', async () => {
    const fake = await wake({ httpsFirst: true });
    const first = await answer(fake, nav('1', 'http://plain.test/'));
    await ui().controller;
    const later = await answer(fake, nav('2', 'http://plain.test/'));
    expect(later).toEqual({ redirectUrl: 'https://plain.test/' });
    expect(first).toEqual(later);
  });

  it('a site the user switched off is left alone on wake too', async () => {
    const fake = await wake({ disabledSites: ['example.org'] });
    const first = await answer(fake, nav('1', 'http://example.org/'));
    await ui().controller;
    const later = await answer(fake, nav('2', 'http://example.org/'));
    expect(later).toEqual({});
    expect(first).toEqual(later);
  });

  it('the global switch off holds on wake too', async () => {
    const fake = await wake({ globalEnabled: false });
    const first = await answer(fake, nav('1', 'http://example.org/'));
    await ui().controller;
    const later = await answer(fake, nav('2', 'http://example.org/'));
    expect(later).toEqual({});
    expect(first).toEqual(later);
  });
});
