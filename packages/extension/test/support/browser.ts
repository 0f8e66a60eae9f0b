import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Worker } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export interface LoadedExtension {
  context: BrowserContext;
  worker: Worker;
  close(): Promise<void>;
}

/**
 * Debian's Chromium in new headless mode with one unpacked extension loaded
 * (--load-extension still works in Chromium builds). Background networking is off: this
 * machine reaches nothing beyond loopback. Chromium's own HTTPS upgrading is off too, so
 * every upgrade seen comes from the extension.
 */
export async function launchWithExtension(extensionDir: string, hostRules: string[], resolverRules?: string): Promise<LoadedExtension> {
  const profile = mkdtempSync(join(tmpdir(), 'httpsify-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--ignore-certificate-errors',
      `--host-resolver-rules=${resolverRules ?? hostRules.map((h) => `MAP ${h} 127.0.0.1`).join(', ')}`,
      `--disable-extensions-except=${extensionDir}`,
      `--load-extension=${extensionDir}`,
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable',
    ],
  });
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker', { timeout: 30_000 }));
  return {
    context,
    worker,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
