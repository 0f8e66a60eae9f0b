import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DnrEmulator,
  parseAsChromium,
  type DnrResourceType,
  type DnrRule,
} from '@httpsify/engine/dnr';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchWithExtension, type LoadedExtension } from './support/browser.js';
import {
  LOOP_TAB,
  loopVerdicts,
  worldPool,
  worldRules,
  type World,
} from './support/differential.js';
import { hostileUrl, REQUEST_TYPES } from './support/hostile-urls.js';

/**
 * The differential test (dnr-differential.test.ts) trusts the DNR emulator; this checks the
 * emulator against Chromium itself, so that a wrong emulator cannot hide a wrong rule. A probe
 * extension holds every rule the extension writes for a world, and Chromium's own matcher
 * (`declarativeNetRequest.testMatchOutcome`: its URL parser, its filters, its priorities) says
 * which rule wins each generated request; the emulator must name the same rule. Nothing leaves
 * the browser: the matcher is asked, no request is sent.
 */
const WORLDS = 8;
const PER_WORLD = 80;
/**
 * Random URLs almost never meet a loop verdict (one exact URL in one tab), so each verdict is
 * also asked as itself and as its near neighbours, in its tab, another tab and no tab.
 */
function nearVerdicts(w: World): Probe[] {
  return loopVerdicts(w).flatMap(({ url }) => {
    const u = new URL(url);
    const near = [
      url,
      `${url}x`,
      url.replace('http://', 'http://user@'),
      url.replace(u.host, `${u.host}:8080`),
    ];
    const types: DnrResourceType[] = ['main_frame', 'image'];
    return near.flatMap((n) =>
      [LOOP_TAB, LOOP_TAB + 1, -1].flatMap((tabId) =>
        types.map((type) => ({ url: n, type, tabId })),
      ),
    );
  });
}

interface Probe {
  url: string;
  type: DnrResourceType;
  tabId: number;
}
const SEED =
  process.env.HTTPSIFY_DIFF_SEED === undefined ? 37 : Number(process.env.HTTPSIFY_DIFF_SEED);

describe('the DNR emulator names the rule real Chromium applies', { timeout: 600_000 }, () => {
  let ext: LoadedExtension;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'httpsify-dnr-probe-'));
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({
        name: 'dnr probe',
        version: '1',
        manifest_version: 3,
        permissions: ['declarativeNetRequest', 'declarativeNetRequestFeedback'],
        host_permissions: ['<all_urls>'],
        background: { service_worker: 'sw.js' },
      }),
    );
    writeFileSync(join(dir, 'sw.js'), '');
    ext = await launchWithExtension(dir, []);
  });

  afterAll(async () => {
    await ext?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Chromium's winning rule id per request (0: none; -1: Chromium refused the URL). */
  async function chromiumWinners(rules: DnrRule[], requests: Probe[]): Promise<number[]> {
    return ext.worker.evaluate(
      async ({ rules, requests }) => {
        const dnr = chrome.declarativeNetRequest;
        // Session rules: only they may name tabs (loop verdicts do), and one rule set keeps
        // Chromium's tie-breaking the emulator's.
        const old = await dnr.getSessionRules();
        await dnr.updateSessionRules({
          removeRuleIds: old.map((r) => r.id),
          addRules: rules as chrome.declarativeNetRequest.Rule[],
        });
        const out: number[] = [];
        for (const r of requests) {
          try {
            const type = r.type as chrome.declarativeNetRequest.ResourceType;
            const m = await dnr.testMatchOutcome({ url: r.url, type, tabId: r.tabId });
            out.push(m.matchedRules[0]?.ruleId ?? 0);
          } catch {
            out.push(-1);
          }
        }
        return out;
      },
      { rules, requests },
    );
  }

  it(`agrees on ${WORLDS * PER_WORLD} generated requests`, async () => {
    const focuses = ['sites', 'once', 'local', 'user', 'known', 'loops'] as const;
    const worlds: World[] = Array.from(
      { length: WORLDS },
      (_, i) =>
        worldPool(focuses[i % focuses.length] as (typeof focuses)[number], 1, SEED + i)[0] as World,
    );
    const disagreements: string[] = [];
    let compared = 0;
    let matched = 0;
    for (const [i, w] of worlds.entries()) {
      const rules = worldRules(w);
      // Without fragments: testMatchOutcome matches the URL with its fragment, while a request
      // Chromium sends carries none (the emulator's reading); see the note in docs/architecture.md.
      // WebTransport only ever opens https:// URLs, so an http:// one is no real request (and
      // Chromium's matcher answered one such case unlike any rule: left out).
      const types = REQUEST_TYPES.filter((t) => t !== 'webtransport');
      // Tab 1 is the tab loop verdicts name; -1 is a request from no tab (a worker's).
      const probe = fc.record({
        url: hostileUrl.map((u) => u.replace(/#.*$/s, '')),
        type: fc.constantFrom(...types),
        tabId: fc.constantFrom(-1, 1, 2),
      });
      const requests = [
        ...fc.sample(probe, { numRuns: PER_WORLD, seed: SEED + 100 + i }),
        ...nearVerdicts(w),
      ];
      const chromium = await chromiumWinners(rules, requests);
      const emulator = new DnrEmulator(rules);
      requests.forEach((r, j) => {
        const parses = parseAsChromium(r.url) !== null;
        const ours = parses
          ? (emulator.match({ url: r.url, type: r.type, tabId: r.tabId }).rule?.id ?? 0)
          : -1;
        const theirs = chromium[j] as number;
        // Chromium refuses to evaluate what it cannot parse; so does the emulator (no rule).
        if (theirs === -1 && ours <= 0) return;
        compared++;
        if (ours > 0) matched++;
        if (ours !== theirs)
          disagreements.push(
            `world ${i} tab ${r.tabId} ${r.type} ${JSON.stringify(r.url)}: Chromium rule ${theirs}, emulator rule ${ours}`,
          );
      });
    }
    expect(disagreements).toEqual([]);
    expect(compared).toBeGreaterThanOrEqual(500);
    // Not vacuous: many requests meet a rule.
    expect(matched).toBeGreaterThan(compared / 4);
  });
});
