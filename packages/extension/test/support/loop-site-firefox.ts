import { launchFirefoxWithExtension, type FirefoxWithExtension } from './firefox.js';
import { LOOP_SITE_HOSTS, loopSiteBuild, type LoopSiteIn } from './subresource-loop-site.js';

/** The loop site and Firefox ESR, the protection mode switched off through the extension's own page. */
export async function loopSiteInFirefox(): Promise<LoopSiteIn<FirefoxWithExtension>> {
  const { dir, server, scratch } = await loopSiteBuild('firefox');
  const browser = await launchFirefoxWithExtension(dir, LOOP_SITE_HOSTS);
  const page = await browser.newTab();
  await page.goto(`${browser.extensionOrigin}/ui/popup.html`);
  await page.evaluate('browser.storage.local.set({ httpsFirst: false })');
  const modeOn = `new Promise((resolve) => { const p = browser.runtime.connect({ name: 'httpsify-ui' }); p.onMessage.addListener((m) => resolve(m.response.httpsFirst)); p.postMessage({ id: 1, request: { type: 'settings' } }); })`;
  for (let i = 0; i < 100 && (await page.evaluate<boolean>(modeOn)); i++)
    await new Promise((r) => setTimeout(r, 100));
  await page.close();
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
