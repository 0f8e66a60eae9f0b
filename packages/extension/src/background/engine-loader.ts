import { loadBundle, type Engine } from '@httpsify/engine';
import { ext } from './browser-api.js';

/** Where the build puts the compiled default rulesets inside the extension. */
export const BUNDLE_PATH = 'rules/default.bundle';

export async function loadBundledEngine(): Promise<Engine> {
  const response = await fetch(ext.runtime.getURL(BUNDLE_PATH));
  if (!response.ok) throw new Error(`cannot read ${BUNDLE_PATH}: HTTP ${response.status}`);
  // The bundle ships inside the extension package, whose integrity the browser guarantees:
  // trusted loading skips the checksum scan and keeps start-up O(1).
  return loadBundle(new Uint8Array(await response.arrayBuffer()), { verify: 'trusted' });
}
