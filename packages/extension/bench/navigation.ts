/**
 * `npm run bench:navigation`: the time the extension adds to a top-level navigation, in Debian's
 * Chromium and Firefox ESR, against the same browser with a profile without the extension.
 *
 * Both profiles of one browser run side by side and navigate strictly in turn (A B A B), so a
 * busy moment of the machine lands on both; the two browsers run one after the other. A sample
 * is the wall time from the start of the navigation to the load event of the page it ends on
 * (for Chromium's handoff page: the page it opens). Cases, all served from loopback (HTTP and
 * HTTPS with a self-signed certificate on one port):
 * - an https:// page no rule touches;
 * - a ruleset host: http:// upgraded by a ruleset (Chromium: a static DNR rule);
 * - a handoff host: a ruleset DNR cannot express (a lookbehind), so Chromium sends its main
 *   frames to the handoff page, whose navigation the service worker answers with a redirect
 *   (the page itself loads only when it cannot); Firefox's listener decides it;
 * - an HTTPS-first host: no ruleset, HTTPS works, the protection mode upgrades it;
 * - Chromium only: the handoff host right after the service worker was stopped, as Chromium
 *   stops it after 30 idle seconds;
 * - a page of 300 http:// images on the ruleset host (upgraded one by one: in Firefox each goes
 *   through the blocking listener), and the same page with https:// addresses; the page itself
 *   is http://127.0.0.1, which stays on HTTP (on an https:// page, Firefox would upgrade the
 *   http:// images itself as mixed content, before any listener).
 * The browser alone ends on the http:// page, the extension on https://: the figures include
 * the local TLS handshake a real upgrade costs too.
 *
 * Firefox runs a third profile in the same turns: a minimal redirector, one blocking listener
 * that sends every http:// request of the bench's hosts to https:// and does nothing else. It is
 * the floor of an extension that upgrades requests one by one. The server counts the images
 * each profile fetched over each scheme (printed), so a profile that upgraded nothing shows.
 *
 * After the last sample, the memory (PSS) of the process that runs each extension: what the
 * extension holds after these navigations, next to the redirector's floor.
 *
 * HTTPSIFY_NAV_SAMPLES (default 20) sets the samples per case, HTTPSIFY_NAV_CASES keeps only the
 * cases whose names contain it; `chromium` or `firefox` as the argument runs one browser.
 * HTTPSIFY_NAV_LIBRARY=1 first imports the 2018 corpus (24,263 rulesets) into the extension's
 * profile through its options page, as a user does: the same cases with a library's engine,
 * rules and memory. Prints one JSON object and a table.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CDPSession, Page } from 'playwright-core';
import { defaultRulesetsDir } from '@httpsify/engine/node';
import { buildExtension } from '../src/packaging/build.js';
import { launchChromiumAlone, launchWithExtension } from '../test/support/browser.js';
import { page, writeRulesetsDir } from '../test/support/e2e-site.js';
import {
  launchFirefoxAlone,
  launchFirefoxWithExtension,
  type FirefoxBrowser,
  type FirefoxTab,
} from '../test/support/firefox.js';
import { startDualServer } from '../test/support/servers.js';
import { descendants, processMemory, type MemoryReading } from './process-memory.js';
import {
  corpusTarball,
  importLibraryInChromium,
  importLibraryInFirefox,
  poll,
} from './library-import.js';

const SAMPLES = Number(process.env['HTTPSIFY_NAV_SAMPLES'] ?? 20);
/** Only the cases whose names contain this text (all by default): for a quicker look at one. */
const ONLY_CASES = process.env['HTTPSIFY_NAV_CASES'] ?? '';
/** The extension's profile with the 2018 library imported (its options page, before the samples). */
const LIBRARY = process.env['HTTPSIFY_NAV_LIBRARY'] === '1';
/** What each run imported, per browser (the options page's last words). */
const imports: Record<string, { importStatus: string; importSeconds: number }> = {};
/** Rounds not counted: connections, the engine and the learned hosts settle first. */
const WARM_UP = 3;
/** How long one navigation may take (a worker woken with a library loads it first). */
const VISIT_MS = 30_000;
/** How long the first round may take to end where it should (the extension starting up). */
const READY_MS = 30_000;

const HOSTS = {
  https: 'https.bench.test',
  ruleset: 'ruleset.bench.test',
  handoff: 'handoff.bench.test',
  first: 'first.bench.test',
} as const;

/** The ruleset host's rule compiles to DNR; the handoff host's lookbehind cannot (RE2 has none). */
const RULESETS = `
<ruleset name="Bench Ruleset">
  <target host="${HOSTS.ruleset}"/>
  <rule from="^http:" to="https:"/>
</ruleset>
<ruleset name="Bench Handoff">
  <target host="${HOSTS.handoff}"/>
  <rule from="^http://handoff\\.bench\\.test(?&lt;!x)(:\\d+)?/" to="https://handoff.bench.test$1/"/>
</ruleset>`;

interface Case {
  name: string;
  host: string;
  /** Where the navigation starts. */
  scheme: 'http' | 'https';
  /** Chromium only: stop the service worker before each sample. */
  coldWorker?: boolean;
  /** A page of IMAGES images on the ruleset host, addressed with this scheme. */
  images?: 'http' | 'https';
}

const IMAGES = 300;
/** A 1×1 transparent GIF. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const ALL_CASES: Case[] = [
  { name: 'https page, no rule', host: HOSTS.https, scheme: 'https' },
  { name: 'ruleset host', host: HOSTS.ruleset, scheme: 'http' },
  { name: 'handoff host', host: HOSTS.handoff, scheme: 'http' },
  { name: 'HTTPS-first host', host: HOSTS.first, scheme: 'http' },
  { name: 'handoff host, worker stopped', host: HOSTS.handoff, scheme: 'http', coldWorker: true },
  // The page itself stays on http:// everywhere (an address is no HTTPS-first host), so no
  // browser upgrades its http:// images as mixed content: each one goes through the listeners.
  { name: `${IMAGES} http:// images`, host: '127.0.0.1', scheme: 'http', images: 'http' },
  { name: `${IMAGES} https:// images`, host: '127.0.0.1', scheme: 'http', images: 'https' },
];

const CASES = ALL_CASES.filter((c) => c.name.includes(ONLY_CASES));

interface Figures {
  median: number;
  p90: number;
}
/** Per profile (`alone`, `extension`, Firefox's `redirector`): its figures and samples. */
interface CaseFigures {
  figures: Record<string, Figures>;
  samples: Record<string, number[]>;
}
type BrowserFigures = Record<string, CaseFigures>;

/** One profile's way to navigate: resolves with the wall time, after checking where it ended. */
type Visit = (url: string, final: string) => Promise<number>;
/**
 * A visit in a tab of its own: each case keeps its tab, so a sample never pays for the process
 * switch from another case's site (the browser alone stays on http://, the extension on https://).
 */
type NewTab = () => Promise<Visit>;

/** Per browser and profile, the extension's process after the samples (null: not found). */
const memory: Record<string, Record<string, MemoryReading | null>> = {};

/** Images fetched, per profile and scheme (the profile is in the page's query). */
const imageCounts: Record<string, { http: number; https: number }> = {};

function serve(req: IncomingMessage, res: ServerResponse, secure: boolean): void {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname === '/library.tar.gz') {
    res.writeHead(200, { 'content-type': 'application/gzip' });
    return void res.end(readFileSync(corpusTarball));
  }
  const profile = url.searchParams.get('p') ?? '';
  if (url.pathname.startsWith('/i/')) {
    const count = (imageCounts[profile] ??= { http: 0, https: 0 });
    count[secure ? 'https' : 'http']++;
    res.writeHead(200, { 'content-type': 'image/gif', 'cache-control': 'no-store' });
    return void res.end(GIF);
  }
  const images = url.searchParams.get('images');
  if (images === 'http' || images === 'https') {
    const port = /:(\d+)$/.exec(req.headers.host ?? '')?.[1] ?? '';
    const base = `${images}://${HOSTS.ruleset}:${port}/i${url.pathname}`;
    const tags = Array.from(
      { length: IMAGES },
      (_, i) => `<img src="${base}/${i}.gif?p=${encodeURIComponent(profile)}">`,
    );
    return page(res, tags.join(''), { 'cache-control': 'no-store' });
  }
  page(res, `${secure ? 'https' : 'http'} ${req.headers.host} ${req.url}`, {
    'cache-control': 'no-store',
  });
}

function figures(samples: number[]): Figures {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
  return { median: rank(0.5), p90: rank(0.9) };
}

/** A profile of one browser: how it opens a tab, and whether it ends on the upgraded page. */
interface Profile {
  name: string;
  newTab: NewTab;
  upgrades: boolean;
}

/**
 * Runs every case with the profiles in turn (A B C A B C); `prepare` runs before each sample of
 * the extension for a case that asks for it. The first round repeats until every profile
 * ends where it should.
 */
async function alternate(
  cases: Case[],
  origin: (scheme: string, host: string) => string,
  profiles: Profile[],
  prepare: (c: Case, profile: string) => Promise<void>,
): Promise<BrowserFigures> {
  const result: BrowserFigures = {};
  const tabs = new Map<Case, Visit[]>();
  for (const c of cases) {
    result[c.name] = {
      figures: {},
      samples: Object.fromEntries(profiles.map((p) => [p.name, []])),
    };
    const visits: Visit[] = [];
    for (const p of profiles) visits.push(await p.newTab());
    tabs.set(c, visits);
  }
  for (let round = -WARM_UP; round < SAMPLES; round++) {
    for (const c of cases) {
      const path = `/${c.host.split('.')[0]}/${round + WARM_UP}`;
      const query = (p: Profile) =>
        `?p=${p.name}` + (c.images === undefined ? '' : `&images=${c.images}`);
      const visitAll = async () => {
        const times: number[] = [];
        for (const [i, p] of profiles.entries()) {
          const url = `${origin(c.scheme, c.host)}${path}${query(p)}`;
          const upgraded = p.upgrades && c.images === undefined;
          const final = upgraded ? `${origin('https', c.host)}${path}${query(p)}` : url;
          await prepare(c, p.name);
          times.push(await tabs.get(c)![i]!(url, final));
        }
        return times;
      };
      let times: number[] | null = null;
      for (const deadline = Date.now() + READY_MS; times === null;) {
        try {
          times = await visitAll();
        } catch (error) {
          if (round > -WARM_UP || Date.now() > deadline) throw error;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      if (round < 0) continue;
      for (const [i, p] of profiles.entries()) result[c.name]!.samples[p.name]!.push(times[i]!);
    }
  }
  for (const f of Object.values(result))
    for (const [name, samples] of Object.entries(f.samples)) f.figures[name] = figures(samples);
  return result;
}

/** Playwright's goto resolves on the first page's load: the handoff page's. Waits for the last. */
function chromiumVisit(tab: Page): Visit {
  return async (url, final) => {
    const started = performance.now();
    await tab.goto(url, { waitUntil: 'commit' });
    try {
      await tab.waitForURL((u) => u.href === final, { waitUntil: 'load', timeout: VISIT_MS });
    } catch {
      throw new Error(`${url} ended on ${tab.url()}, not ${final}, within ${VISIT_MS} ms`);
    }
    return performance.now() - started;
  };
}

async function chromiumFigures(
  extensionDir: string,
  redirectorDir: string,
  origin: (scheme: string, host: string) => string,
): Promise<BrowserFigures> {
  const hostRules = ['*.bench.test'];
  const opened: { close(): Promise<void> }[] = [];
  try {
    const alone = await launchChromiumAlone(hostRules);
    opened.push(alone);
    const ext = await launchWithExtension(extensionDir, hostRules);
    opened.push(ext);
    if (LIBRARY) imports['chromium'] = await importLibraryInChromium(ext);
    const redirector = await launchWithExtension(redirectorDir, hostRules);
    opened.push(redirector);
    // Before each sample of a cold-worker case, each extension's worker is stopped, as
    // Chromium stops it after 30 idle seconds.
    const devtools = new Map<string, CDPSession>();
    for (const [name, profile] of [
      ['extension', ext],
      ['redirector', redirector],
    ] as const) {
      const session = await profile.context.newCDPSession(await profile.context.newPage());
      await session.send('ServiceWorker.enable');
      devtools.set(name, session);
    }
    const prepare = async (c: Case, profile: string) => {
      if (c.coldWorker === true) await devtools.get(profile)?.send('ServiceWorker.stopAllWorkers');
    };
    const profiles: Profile[] = [
      {
        name: 'alone',
        newTab: async () => chromiumVisit(await alone.context.newPage()),
        upgrades: false,
      },
      {
        name: 'extension',
        newTab: async () => chromiumVisit(await ext.context.newPage()),
        upgrades: true,
      },
      {
        name: 'redirector',
        newTab: async () => chromiumVisit(await redirector.context.newPage()),
        upgrades: true,
      },
    ];
    const result = await alternate(CASES, origin, profiles, prepare);
    const extensionProcess = (dir: string) => {
      const browser = descendants(process.pid).find(
        (p) =>
          p.args.includes(`--load-extension=${dir}`) &&
          !p.args.some((a) => a.startsWith('--type=')),
      );
      const found =
        browser && descendants(browser.pid).find((p) => p.args.includes('--extension-process'));
      return found === undefined ? null : processMemory(found.pid);
    };
    memory['chromium'] = {
      extension: extensionProcess(extensionDir),
      redirector: extensionProcess(redirectorDir),
    };
    return result;
  } finally {
    for (const b of opened.reverse()) await b.close();
  }
}

function firefoxVisit(tab: FirefoxTab): Visit {
  return async (url, final) => {
    const started = performance.now();
    const ended = await tab.goto(url);
    const ms = performance.now() - started;
    if (ended !== final) throw new Error(`${url} ended on ${ended}, not ${final}`);
    return ms;
  };
}

/**
 * The floor: an extension that sends every http:// request of the bench's hosts to https:// and
 * does nothing else. Firefox: one blocking listener, loaded as httpsify's background is (MV3,
 * background script). Chromium: one static DNR `upgradeScheme` rule, and for the handoff host
 * the least a handoff can be: a static rule sends its main frames to the extension's page,
 * whose navigation the service worker answers with a redirect to https:// at once (nothing
 * read, nothing decided) — with the worker stopped, what starting a worker costs.
 */
function writeRedirector(dir: string, browser: 'chromium' | 'firefox'): string {
  mkdirSync(dir, { recursive: true });
  const common = { manifest_version: 3, name: 'bench redirector', version: '1.0' };
  const manifest =
    browser === 'firefox'
      ? {
          ...common,
          background: { scripts: ['background.js'] },
          permissions: ['webRequest', 'webRequestBlocking'],
          host_permissions: ['<all_urls>'],
          browser_specific_settings: { gecko: { id: 'redirector@bench.test' } },
        }
      : {
          ...common,
          background: { service_worker: 'background.js' },
          permissions: ['declarativeNetRequest'],
          host_permissions: ['<all_urls>'],
          declarative_net_request: {
            rule_resources: [{ id: 'upgrade', enabled: true, path: 'rules.json' }],
          },
          web_accessible_resources: [{ resources: ['h.html'], matches: ['<all_urls>'] }],
        };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  const rule = {
    id: 1,
    priority: 1,
    action: { type: 'upgradeScheme' },
    condition: { requestDomains: ['bench.test'], resourceTypes: ['main_frame', 'image'] },
  };
  writeFileSync(join(dir, 'rules.json'), JSON.stringify([rule]));
  writeFileSync(join(dir, 'h.html'), '<!doctype html><title>handoff</title>');
  writeFileSync(
    join(dir, 'background.js'),
    browser === 'chromium'
      ? `// The rules do the work; the handoff page's navigation is answered here, at once. Its
// rule needs the extension's address, so it is written at install.
chrome.runtime.onInstalled.addListener(() =>
  chrome.declarativeNetRequest.updateDynamicRules({
    removeRuleIds: [2],
    addRules: [{
      id: 2,
      priority: 2,
      action: { type: 'redirect', redirect: { regexSubstitution: chrome.runtime.getURL('h.html') + '?\\\\0' } },
      condition: { regexFilter: '^http://.*', requestDomains: [${JSON.stringify(HOSTS.handoff)}], resourceTypes: ['main_frame'] },
    }],
  }),
);
self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (url.pathname !== '/h.html' || url.search === '') return;
  event.respondWith(Response.redirect('https:' + url.search.slice(1).replace(/^http:/, ''), 302));
});\n`
      : `browser.webRequest.onBeforeRequest.addListener(
  (d) => ({ redirectUrl: 'https:' + d.url.slice(5) }),
  { urls: ['http://*.bench.test/*'] },
  ['blocking'],
);\n`,
  );
  return dir;
}

async function firefoxFigures(
  extensionDir: string,
  redirectorDir: string,
  origin: (scheme: string, host: string) => string,
): Promise<BrowserFigures> {
  const hosts = Object.values(HOSTS);
  const opened: FirefoxBrowser[] = [];
  try {
    const alone = await launchFirefoxAlone(hosts);
    opened.push(alone);
    const firefox = await launchFirefoxWithExtension(extensionDir, hosts);
    opened.push(firefox);
    if (LIBRARY) {
      const options = await firefox.newTab();
      await options.goto(`${firefox.extensionOrigin}/ui/options.html`);
      await poll(
        'the options page',
        () => options.evaluate<string | undefined>('document.body.dataset.ready'),
        (r) => r === 'true',
        30_000,
      );
      imports['firefox'] = await importLibraryInFirefox(
        options,
        `${origin('http', HOSTS.https)}/library.tar.gz`,
      );
      await options.close();
    }
    const redirector = await launchFirefoxWithExtension(redirectorDir, hosts);
    opened.push(redirector);
    const profiles: Profile[] = [
      { name: 'alone', newTab: async () => firefoxVisit(await alone.newTab()), upgrades: false },
      {
        name: 'extension',
        newTab: async () => firefoxVisit(await firefox.newTab()),
        upgrades: true,
      },
      {
        name: 'redirector',
        newTab: async () => firefoxVisit(await redirector.newTab()),
        upgrades: true,
      },
    ];
    // Firefox's background never stops: no cold-worker case.
    const cases = CASES.filter((c) => c.coldWorker !== true);
    const result = await alternate(cases, origin, profiles, async () => undefined);
    const extensionProcess = (pid: number) => {
      const found = descendants(pid).find((p) => p.name === 'WebExtensions');
      return found === undefined ? null : processMemory(found.pid);
    };
    memory['firefox'] = {
      extension: extensionProcess(firefox.pid),
      redirector: extensionProcess(redirector.pid),
    };
    return result;
  } finally {
    for (const b of opened.reverse()) await b.close();
  }
}

const only = process.argv[2];
const rulesDir = writeRulesetsDir(RULESETS, 'httpsify-bench-nav-rules-');
const out = mkdtempSync(join(tmpdir(), 'httpsify-bench-nav-'));
const server = await startDualServer(serve);
const origin = (scheme: string, host: string) => `${scheme}://${host}:${server.port}`;
const results: Record<string, BrowserFigures> = {};
const started = performance.now();
try {
  // The default rulesets too, so the service worker loads the engine a user's does.
  const built = await buildExtension({
    rulesets: [defaultRulesetsDir(), rulesDir],
    outDir: out,
    browsers: ['chromium', 'firefox'],
    zip: false,
  });
  if (
    !built.handoff.domains.includes(HOSTS.handoff) ||
    built.handoff.domains.includes(HOSTS.ruleset)
  ) {
    throw new Error(
      `the build's handoff scope is not what the bench needs: ${JSON.stringify(built.handoff)}`,
    );
  }
  if (only === undefined || only === 'chromium')
    results['chromium'] = await chromiumFigures(
      built.dirs.chromium!,
      writeRedirector(join(out, 'redirector-chromium'), 'chromium'),
      origin,
    );
  if (only === undefined || only === 'firefox')
    results['firefox'] = await firefoxFigures(
      built.dirs.firefox!,
      writeRedirector(join(out, 'redirector-firefox'), 'firefox'),
      origin,
    );
} finally {
  await server.close();
  rmSync(out, { recursive: true, force: true });
  rmSync(rulesDir, { recursive: true, force: true });
}

// The samples too (to 0.1 ms), for whoever wants another statistic than these.
const tenths = (xs: number[]) => xs.map((x) => Math.round(x * 10) / 10);
const summary = Object.fromEntries(
  Object.entries(results).map(([browser, cases]) => [
    browser,
    Object.fromEntries(
      Object.entries(cases).map(([c, f]) => [
        c,
        {
          figures: f.figures,
          samples: Object.fromEntries(Object.entries(f.samples).map(([p, xs]) => [p, tenths(xs)])),
        },
      ]),
    ),
  ]),
);
process.stdout.write(`${JSON.stringify({ results: summary, imageCounts, memory, imports })}\n\n`);
const ms = (n: number) => n.toFixed(0).padStart(5);
const signed = (n: number) => `${n >= 0 ? '+' : '-'}${Math.abs(n).toFixed(0)}`.padStart(5);
const percent = (n: number, of: number) => `${signed((100 * n) / of)}%`;
for (const [browser, cases] of Object.entries(results)) {
  process.stdout.write(
    (imports[browser] === undefined
      ? ''
      : `${browser} with the 2018 library imported (${imports[browser]!.importSeconds.toFixed(0)} s): ${imports[browser]!.importStatus}\n`) +
      `${browser}, ${SAMPLES} samples a case (ms)    alone med  p90 | extension med  p90 | added med  p90` +
      ' | redirector med  p90 | added med  p90 | ext vs redirector med' +
      '\n',
  );
  for (const [name, f] of Object.entries(cases)) {
    const alone = f.figures['alone']!;
    const row = (p: Figures) =>
      `     ${ms(p.median)} ${ms(p.p90)} | ${signed(p.median - alone.median)} ${signed(p.p90 - alone.p90)}`;
    const ext = f.figures['extension']!;
    const red = f.figures['redirector'];
    process.stdout.write(
      `  ${name.padEnd(34)} ${ms(alone.median)} ${ms(alone.p90)} |${row(ext)}` +
        (red === undefined
          ? ''
          : ` |    ${row(red)} | ${percent(ext.median - red.median, red.median)}`) +
        '\n',
    );
  }
  const handoff = cases['handoff host']?.figures['extension'];
  const ruleset = cases['ruleset host']?.figures['extension'];
  if (browser === 'chromium' && handoff !== undefined && ruleset !== undefined) {
    process.stdout.write(
      `  handoff host vs a plain DNR redirect: ${signed(handoff.median - ruleset.median)} ms median,` +
        ` ${signed(handoff.p90 - ruleset.p90)} ms p90\n`,
    );
  }
  const mb = (r: MemoryReading | null | undefined) =>
    r === null || r === undefined
      ? 'not found'
      : `${r.pssMb.toFixed(0)} MB PSS (${r.rssMb.toFixed(0)} MB RSS)`;
  process.stdout.write(
    `  extension process after the samples: httpsify ${mb(memory[browser]?.['extension'])},` +
      ` redirector ${mb(memory[browser]?.['redirector'])}\n\n`,
  );
}
process.stdout.write(`images fetched (profile: http/https): ${JSON.stringify(imageCounts)}\n`);
process.stdout.write(`total ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
