/**
 * `npm run bench:extension`: the extension in use, in Debian's Chromium and Firefox ESR.
 *
 * For each browser: the memory of the process that runs the extension (Chromium's extension
 * process, which hosts the service worker; Firefox's "WebExtensions" content process, which hosts
 * the background page), first with the packaged default rulesets and then with the whole 2018
 * library imported through the options page as a user does it; the import's wall time; and the
 * load time of a page of 1,000 plain-HTTP images on hosts no ruleset covers, which every request
 * listener and rule the extension installs sees. Prints one JSON object and a table.
 *
 * HTTPS Everywhere users reported 100–230 MB for the old extension with the same library.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { buildExtension } from '../src/packaging/build.js';
import { UI_PORT_NAME } from '../src/protocol/ui-protocol.js';
import { launchWithExtension, switchProtectionModeOff } from '../test/support/browser.js';
import { launchFirefoxWithExtension, type FirefoxTab } from '../test/support/firefox.js';
import { startDualServer } from '../test/support/servers.js';
import { corpusTarball } from '../../engine/test/support/corpus.js';
import { descendants, processMemory, type MemoryReading } from './process-memory.js';
import { importLibraryInChromium, importLibraryInFirefox, poll } from './library-import.js';

const IMAGES = 1_000;
const IMAGE_HOSTS = Array.from({ length: 10 }, (_, i) => `img${i}.bench.test`);
const PAGE_HOST = 'page.bench.test';
const SETTLE_MS = 10_000;
/** A restarted extension reads, checks and loads the stored library before it settles. */
const RESTART_SETTLE_MS = 30_000;
/** A 1×1 transparent GIF. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

interface BrowserFigures {
  defaults: MemoryReading;
  /** Right after the import, its page closed: what the import left behind. */
  library: MemoryReading;
  /**
   * After the extension restarted and loaded the stored library: what a user lives with. The
   * process is the one that ran the import, so what its allocators kept from it is still there.
   */
  restarted: MemoryReading;
  importSeconds: number;
  importStatus: string;
  pageMs: { defaults: number; library: number };
}

function serve(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '/';
  if (path.startsWith('/library.tar.gz')) {
    res.writeHead(200, { 'content-type': 'application/gzip' });
    return void res.end(readFileSync(corpusTarball));
  }
  if (path.startsWith('/i/')) {
    res.writeHead(200, { 'content-type': 'image/gif', 'cache-control': 'no-store' });
    return void res.end(GIF);
  }
  const port = /:(\d+)$/.exec(req.headers.host ?? '')?.[1] ?? '80';
  const run = new URL(path, 'http://x').searchParams.get('run') ?? '0';
  const images = Array.from(
    { length: IMAGES },
    (_, i) => `<img src="http://${IMAGE_HOSTS[i % IMAGE_HOSTS.length]}:${port}/i/${run}/${i}.gif">`,
  );
  res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' });
  res.end(`<!doctype html><title>images</title><body>${images.join('')}</body>`);
}

/** The page's own load time (navigation start to the end of its load event), second of two runs. */
const LOAD_MS = `(() => { const n = performance.getEntriesByType('navigation')[0]; return Math.round(n.loadEventEnd); })()`;

/** Memory settles a few seconds after work: collections and freed pages run in the background. */
async function settledMemory(read: () => MemoryReading, ms = SETTLE_MS): Promise<MemoryReading> {
  await new Promise((r) => setTimeout(r, ms));
  return read();
}

async function chromiumFigures(
  extensionDir: string,
  pageUrl: (run: number) => string,
): Promise<BrowserFigures> {
  const ext = await launchWithExtension(extensionDir, [PAGE_HOST, ...IMAGE_HOSTS]);
  try {
    await switchProtectionModeOff(ext);
    // The browser process is the one given the extension; its service worker lives in the
    // child marked as the extension process.
    const browser = descendants(process.pid).find(
      (p) =>
        p.args.includes(`--load-extension=${extensionDir}`) &&
        !p.args.some((a) => a.startsWith('--type=')),
    );
    if (browser === undefined) throw new Error('no Chromium browser process found below this one');
    const extensionProcess = () => {
      const found = descendants(browser.pid).find((p) => p.args.includes('--extension-process'));
      if (found === undefined) throw new Error('no Chromium extension process found');
      return processMemory(found.pid);
    };
    const page = await ext.context.newPage();
    const pageMs = async (base: number) => {
      await page.goto(pageUrl(base), { waitUntil: 'load' });
      await page.goto(pageUrl(base + 1), { waitUntil: 'load' });
      return page.evaluate<number>(LOAD_MS);
    };
    const defaultsMs = await pageMs(0);
    const defaults = await settledMemory(extensionProcess);
    const { importStatus, importSeconds } = await importLibraryInChromium(ext);
    const library = await settledMemory(extensionProcess);
    // Chromium stops an idle service worker after 30 seconds; stopped here at once, and woken
    // by the page's requests, it loads the stored library as it does many times a day.
    const devtools = await ext.context.newCDPSession(page);
    await devtools.send('ServiceWorker.enable');
    await devtools.send('ServiceWorker.stopAllWorkers');
    const libraryMs = await pageMs(10);
    const restarted = await settledMemory(extensionProcess, RESTART_SETTLE_MS);
    return {
      defaults,
      library,
      restarted,
      importSeconds,
      importStatus,
      pageMs: { defaults: defaultsMs, library: libraryMs },
    };
  } finally {
    await ext.close();
  }
}

async function firefoxFigures(
  extensionDir: string,
  pageUrl: (run: number) => string,
): Promise<BrowserFigures> {
  const firefox = await launchFirefoxWithExtension(extensionDir, [PAGE_HOST, ...IMAGE_HOSTS]);
  try {
    const extensionProcess = () => {
      const found = descendants(firefox.pid).find((p) => p.name === 'WebExtensions');
      if (found === undefined) throw new Error('no Firefox WebExtensions process found');
      return processMemory(found.pid);
    };
    const options = await firefox.newTab();
    await options.goto(`${firefox.extensionOrigin}/ui/options.html`);
    await poll(
      'the options page',
      () => options.evaluate<string | undefined>('document.body.dataset.ready'),
      (r) => r === 'true',
      30_000,
    );
    await switchFirefoxModeOff(options);
    const tab = await firefox.newTab();
    const pageMs = async (base: number) => {
      await tab.goto(pageUrl(base));
      await tab.goto(pageUrl(base + 1));
      return tab.evaluate<number>(LOAD_MS);
    };
    const defaultsMs = await pageMs(0);
    const defaults = await settledMemory(extensionProcess);
    const { importStatus, importSeconds } = await importLibraryInFirefox(
      options,
      pageUrl(-1).replace(/\/\?.*$/, '/library.tar.gz'),
    );
    const library = await settledMemory(extensionProcess);
    const reloader = await firefox.newTab();
    await reloader.goto(`${firefox.extensionOrigin}/ui/options.html`);
    // The page goes with the extension it reloads: it answers first, then reloads.
    await reloader.evaluate('(setTimeout(() => browser.runtime.reload(), 100), true)');
    // Closed at once, the tab took its timer with it and nothing reloaded (the background
    // page's performance.timeOrigin stayed the same); closed after the reload, it is gone.
    await new Promise((r) => setTimeout(r, 2_000));
    await reloader.close().catch(() => undefined);
    // Firefox starts a reloaded extension's background page (an MV3 event page) at its first
    // event and suspends it after 30 idle seconds: the page's requests wake it, and it is read
    // while awake, having loaded the stored library.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const libraryMs = await pageMs(10);
    const restarted = await settledMemory(extensionProcess);
    return {
      defaults,
      library,
      restarted,
      importSeconds,
      importStatus,
      pageMs: { defaults: defaultsMs, library: libraryMs },
    };
  } finally {
    await firefox.close();
  }
}

/** The protection mode would move the page to HTTPS, and its images with it; the bench wants them on HTTP. */
async function switchFirefoxModeOff(options: FirefoxTab): Promise<void> {
  await options.evaluate('browser.storage.local.set({ httpsFirst: false })');
  const modeOn = `new Promise((resolve) => {
    const p = browser.runtime.connect({ name: ${JSON.stringify(UI_PORT_NAME)} });
    p.onMessage.addListener((m) => { p.disconnect(); resolve(m.response.httpsFirst); });
    p.postMessage({ id: 1, request: { type: 'settings' } });
  })`;
  await poll(
    'the protection mode to go off',
    () => options.evaluate<boolean>(modeOn),
    (on) => !on,
    30_000,
  );
}

const only = process.argv[2];
const out = mkdtempSync(join(tmpdir(), 'httpsify-bench-ext-'));
const server = await startDualServer(serve);
const pageUrl = (run: number) => `http://${PAGE_HOST}:${server.port}/?run=${run}`;
const figures: Record<string, BrowserFigures> = {};
try {
  const built = await buildExtension({
    outDir: out,
    browsers: ['chromium', 'firefox'],
    zip: false,
  });
  if (only === undefined || only === 'chromium')
    figures.chromium = await chromiumFigures(built.dirs.chromium!, pageUrl);
  if (only === undefined || only === 'firefox')
    figures.firefox = await firefoxFigures(built.dirs.firefox!, pageUrl);
} finally {
  await server.close();
  rmSync(out, { recursive: true, force: true });
}

process.stdout.write(`${JSON.stringify(figures)}\n\n`);
const mb = (r: MemoryReading) =>
  `${r.pssMb.toFixed(0)} MB PSS (${r.rssMb.toFixed(0)} MB RSS, ${r.lazyFreeMb.toFixed(0)} MB of it lazily freed)`;
for (const [browser, f] of Object.entries(figures)) {
  process.stdout.write(
    [
      `${browser}: extension process with the defaults ${mb(f.defaults)}`,
      `  with the 2018 library: ${mb(f.library)} after the import, ${mb(f.restarted)} after a restart`,
      `  import ${f.importSeconds.toFixed(0)} s: ${f.importStatus}`,
      `  page of ${IMAGES} plain-HTTP images: ${f.pageMs.defaults} ms with the defaults, ${f.pageMs.library} ms with the library`,
      '',
    ].join('\n'),
  );
}
