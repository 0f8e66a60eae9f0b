import { launchWithExtension, switchProtectionModeOff, type LoadedExtension } from './browser.js';
import { LOOP_SITE_HOSTS, loopSiteBuild, type LoopSiteIn } from './subresource-loop-site.js';

/** Chromium with the protection mode off: the rulesets alone upgrade (the page stays on HTTP). */
export async function loopSiteInChromium(): Promise<LoopSiteIn<LoadedExtension>> {
  const { dir, server, scratch } = await loopSiteBuild('chromium');
  const browser = await launchWithExtension(dir, LOOP_SITE_HOSTS);
  await switchProtectionModeOff(browser);
  return {
    server,
    browser,
    at: (host, path) => `http://${host}:${server.port}${path}`,
    close: async () => {
      await browser.close();
      await server.close();
      scratch();
    },
  };
}
