import { compileBundle } from '@httpsify/engine';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DecisionInput } from '../src/decision/decide.js';
import { rulesetsOf } from './support/channels.js';
import { FakeEvent, fakeBrowser, type FakeBrowser } from './support/fake-browser.js';

/**
 * Each request is decided once (issue 39): the door that enforces a decision hands it, reason
 * and all, to the observer, the statistics and the fallback, which do not decide it again. The
 * background entries run here as they do in the browser, on a fake browser namespace; every
 * call of decide() for a request is counted.
 */
const DEFAULTS = rulesetsOf(
  '<ruleset name="Example"><target host="example.org"/><rule from="^http:" to="https:"/></ruleset>',
);
const bundle = compileBundle(DEFAULTS, { timestamp: 1_700_000_000 });

interface Loaded {
  fake: FakeBrowser;
  /** The URLs decide() was asked about, in order. */
  decided: string[];
}

async function load(entry: 'firefox' | 'chromium'): Promise<Loaded> {
  const base = entry === 'firefox' ? 'moz-extension://decide-once/' : 'chrome-extension://once/';
  const fake = fakeBrowser(base);
  vi.stubGlobal(entry === 'firefox' ? 'browser' : 'chrome', fake.ns);
  vi.stubGlobal('HTTPSIFY_TEST_HOOKS', true);
  // Chromium's worker scope (the handoff's fetch event): nothing fires it here.
  vi.stubGlobal('addEventListener', () => undefined);
  vi.stubGlobal('fetch', async (url: string) =>
    url.endsWith('rules/default.bundle')
      ? new Response(new Uint8Array(bundle))
      : new Response(JSON.stringify({ domains: [], patterns: [] })),
  );
  vi.resetModules();
  const decided: string[] = [];
  vi.doMock('../src/decision/decide.js', async (original) => {
    const real = await original<typeof import('../src/decision/decide.js')>();
    return {
      ...real,
      decide: (input: DecisionInput) => (decided.push(input.url), real.decide(input)),
    };
  });
  await import(`../src/background/${entry}.ts`);
  const ui = (globalThis as unknown as { httpsifyUi: { controller: Promise<unknown> } }).httpsifyUi;
  await ui.controller;
  return { fake, decided };
}

afterEach(() => {
  vi.doUnmock('../src/decision/decide.js');
  vi.unstubAllGlobals();
  vi.resetModules();
});

const count = (decided: string[], url: string) => decided.filter((u) => u === url).length;

describe('one decision per request', () => {
  it("Firefox: the blocking listener's decision is the observer's", async () => {
    const { fake, decided } = await load('firefox');
    const requests = [
      { requestId: '1', tabId: 3, frameId: 0, type: 'main_frame', url: 'http://example.org/' },
      { requestId: '2', tabId: 3, frameId: 0, type: 'main_frame', url: 'http://plain.test/' },
      { requestId: '3', tabId: 3, frameId: 0, type: 'image', url: 'http://plain.test/a.png' },
    ];
    for (const d of requests) {
      const answers = await Promise.all(fake.event('webRequest.onBeforeRequest').fire(d));
      // The browser follows the blocking answer: an upgrade, or nothing.
      expect(answers.some((a) => a !== undefined)).toBe(true);
      expect(count(decided, d.url)).toBe(1);
    }
    // The statistics and the popup still saw the upgrades (ruleset and HTTPS-first).
    const activity = (globalThis as unknown as { httpsifyUi: { controller: Promise<Ctl> } })
      .httpsifyUi;
    const tab = (await activity.controller).activity.get(3);
    expect(tab?.upgraded).toBeGreaterThan(0);
  });

  it('Chromium: an observed request that redirects is decided once', async () => {
    const { fake, decided } = await load('chromium');
    const url = 'http://plain.test/a.png';
    const d = { requestId: '7', tabId: 3, frameId: 0, type: 'image', url };
    fake.event('webRequest.onBeforeRequest').fire(d);
    // The site itself sends it to HTTPS: the redirect reads the decision already made.
    fake
      .event('webRequest.onBeforeRedirect')
      .fire({ ...d, redirectUrl: 'https://plain.test/a.png' });
    expect(count(decided, url)).toBe(1);
    // A rule's redirect the observer sees only afterwards: decided once there.
    const ruled = {
      requestId: '8',
      tabId: 3,
      frameId: 0,
      type: 'image',
      url: 'http://example.org/x',
    };
    fake
      .event('webRequest.onBeforeRedirect')
      .fire({ ...ruled, redirectUrl: 'https://example.org/x' });
    fake.event('webRequest.onBeforeRequest').fire({ ...ruled, url: 'https://example.org/x' });
    expect(count(decided, ruled.url)).toBe(1);
  });

  it("Chromium: the handoff's decision is the observer's and the fallback's", async () => {
    const { fake, decided } = await load('chromium');
    const url = 'http://plain.test/';
    const answers: unknown[] = [];
    const port = {
      name: 'handoff',
      sender: {
        id: 'once',
        url: `chrome-extension://once/ui/handoff.html?${url}`,
        tab: { id: 4 },
        frameId: 0,
      },
      onMessage: new FakeEvent(),
      postMessage: (m: unknown) => answers.push(m),
    };
    fake.event('runtime.onConnect').fire(port);
    port.onMessage.fire({ url });
    await vi.waitFor(() => expect(answers).toHaveLength(1));
    // HTTPS-first's upgrade (the default mode): followed by the fallback, counted, decided once.
    expect(answers[0]).toEqual({ ok: true, target: 'https://plain.test/', once: false });
    expect(count(decided, url)).toBe(1);
  });
});

interface Ctl {
  activity: { get(tabId: number): { upgraded: number } | undefined };
}
