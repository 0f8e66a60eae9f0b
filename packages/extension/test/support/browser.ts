import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Worker } from 'playwright-core';
import { BROWSERS, requireBrowser } from './browser-requirements.js';

export const CHROMIUM = BROWSERS.chromium;

export interface LoadedExtension {
  context: BrowserContext;
  worker: Worker;
  close(): Promise<void>;
}

export interface LaunchOptions {
  /**
   * Keep Chromium's own HTTPS-Upgrades on, as users have it. Playwright's default switches
   * include `--disable-features=...,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,...`, and
   * `ignoreDefaultArgs` only drops a switch by its exact text (which changes with every
   * Playwright release), so this launches with none of Playwright's defaults and passes the
   * few it needs itself. Chromium upgrades only default ports and public-looking names (not
   * `.test`), so such tests map `host:80` and `host:443` to the local server's port.
   */
  browserUpgrades?: boolean;
  /** Full `MAP ...` resolver rules (ports included), instead of `host -> 127.0.0.1`. */
  resolverRules?: string[];
  /**
   * Trust only certificates with these SPKI hashes (base64 SHA-256) instead of ignoring every
   * certificate error, so that a test can meet a real certificate error.
   */
  trustedSpki?: string[];
}

/**
 * Debian's Chromium in new headless mode with one unpacked extension loaded
 * (--load-extension still works in Chromium builds). Background networking is off: this
 * machine reaches nothing beyond loopback. Unless `browserUpgrades` is set, Chromium's own
 * HTTPS upgrading is off too, so every upgrade seen comes from the extension.
 */
export async function launchWithExtension(
  extensionDir: string,
  hostRules: string[],
  options: LaunchOptions = {},
): Promise<LoadedExtension> {
  const { context, close } = await launchChromiumProfile(extensionDir, hostRules, options);
  const worker =
    context.serviceWorkers()[0] ??
    (await context.waitForEvent('serviceworker', { timeout: 30_000 }));
  return { context, worker, close };
}

/** The same browser and switches with no extension: what a bench holds the extension against. */
export async function launchChromiumAlone(
  hostRules: string[],
  options: LaunchOptions = {},
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  return launchChromiumProfile(null, hostRules, options);
}

/** Features that make Chromium send requests of its own (Playwright disables them too). */
const BROWSER_NOISE = [
  'OptimizationHints',
  'OptimizationGuideModelDownloading',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'MediaRouter',
  'LensOverlay',
  'DestroyProfileOnBrowserClose',
];

async function launchChromiumProfile(
  extensionDir: string | null,
  hostRules: string[],
  options: LaunchOptions,
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  requireBrowser('chromium');
  const profile = mkdtempSync(join(tmpdir(), 'httpsify-profile-'));
  const rules = options.resolverRules ?? hostRules.map((h) => `MAP ${h} 127.0.0.1`);
  const args = [
    '--no-sandbox',
    '--disable-gpu',
    options.trustedSpki === undefined
      ? '--ignore-certificate-errors'
      : `--ignore-certificate-errors-spki-list=${options.trustedSpki.join(',')}`,
    `--host-resolver-rules=${rules.join(', ')}`,
    ...(extensionDir === null
      ? []
      : [`--disable-extensions-except=${extensionDir}`, `--load-extension=${extensionDir}`]),
    '--disable-background-networking',
    '--disable-component-update',
    '--no-first-run',
    // Chromium keeps only the last `--disable-features`, so this one replaces Playwright's list
    // and must carry what the tests need from it: no optimization hints, network-time or
    // search-preconnect requests from the browser itself, which a catch-all resolver would
    // send to the test server beside the page's own requests.
    `--disable-features=${[
      ...BROWSER_NOISE,
      ...(options.browserUpgrades === true
        ? []
        : ['HttpsUpgrades', 'HttpsFirstBalancedModeAutoEnable']),
    ].join(',')}`,
  ];
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    ...(options.browserUpgrades === true
      ? {
          ignoreDefaultArgs: true,
          args: [
            ...args,
            '--headless',
            '--no-default-browser-check',
            '--disable-dev-shm-usage',
            '--mute-audio',
            `--user-data-dir=${profile}`,
            '--remote-debugging-pipe',
            'about:blank',
          ],
        }
      : { args }),
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Tests about rulesets and channels switch the protection mode (on by default) off, so that a
 * host no ruleset covers is a real control; protection-chromium.test.ts covers the mode. Waits
 * until the mode's main-frame upgrade rule is gone.
 */
export async function switchProtectionModeOff(ext: LoadedExtension): Promise<void> {
  await ext.worker.evaluate(async () => chrome.storage.local.set({ httpsFirst: false }));
  const modeRule = () =>
    ext.worker.evaluate(async () =>
      (await chrome.declarativeNetRequest.getDynamicRules()).some(
        (r) => (r.priority ?? 1) <= 2 && r.action.type === 'upgradeScheme',
      ),
    );
  for (let i = 0; i < 100 && (await modeRule()); i++) await new Promise((r) => setTimeout(r, 100));
}
