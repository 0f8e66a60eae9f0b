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
 *   stops it after 30 idle seconds.
 * The browser alone ends on the http:// page, the extension on https://: the figures include
 * the local TLS handshake a real upgrade costs too.
 *
 * HTTPSIFY_NAV_SAMPLES (default 20) sets the samples per case; `chromium` or `firefox` as the
 * argument runs one browser. Prints one JSON object and a table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Page } from 'playwright-core';
import { defaultRulesetsDir } from '@httpsify/engine/node';
import { buildExtension } from '../src/packaging/build.js';
import { launchChromiumAlone, launchWithExtension } from '../test/support/browser.js';
import { page, writeRulesetsDir } from '../test/support/e2e-site.js';
import {
  launchFirefoxAlone,
  launchFirefoxWithExtension,
  type FirefoxTab,
} from '../test/support/firefox.js';
import { startDualServer } from '../test/support/servers.js';

const SAMPLES = Number(process.env['HTTPSIFY_NAV_SAMPLES'] ?? 20);
/** Rounds not counted: connections, the engine and the learned hosts settle first. */
const WARM_UP = 3;
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
}

const CASES: Case[] = [
  { name: 'https page, no rule', host: HOSTS.https, scheme: 'https' },
  { name: 'ruleset host', host: HOSTS.ruleset, scheme: 'http' },
  { name: 'handoff host', host: HOSTS.handoff, scheme: 'http' },
  { name: 'HTTPS-first host', host: HOSTS.first, scheme: 'http' },
  { name: 'handoff host, worker stopped', host: HOSTS.handoff, scheme: 'http', coldWorker: true },
];

interface Figures {
  median: number;
  p90: number;
}
interface CaseFigures {
  alone: Figures;
  extension: Figures;
  samples: { alone: number[]; extension: number[] };
}
type BrowserFigures = Record<string, CaseFigures>;

/** One profile's way to navigate: resolves with the wall time, after checking where it ended. */
type Visit = (url: string, final: string) => Promise<number>;
/**
 * A visit in a tab of its own: each case keeps its tab, so a sample never pays for the process
 * switch from another case's site (the browser alone stays on http://, the extension on https://).
 */
type NewTab = () => Promise<Visit>;

function serve(req: IncomingMessage, res: ServerResponse, secure: boolean): void {
  page(res, `${secure ? 'https' : 'http'} ${req.headers.host} ${req.url}`, {
    'cache-control': 'no-store',
  });
}

function figures(samples: number[]): Figures {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
  return { median: rank(0.5), p90: rank(0.9) };
}

/**
 * Runs every case with both profiles in turn; `prepare` runs before each extension sample of a
 * case that asks for it. The first round repeats until both profiles end where they should.
 */
async function alternate(
  cases: Case[],
  origin: (scheme: string, host: string) => string,
  newTab: { alone: NewTab; extension: NewTab },
  prepare: (c: Case) => Promise<void>,
): Promise<BrowserFigures> {
  const result: BrowserFigures = {};
  const tabs = new Map<Case, { alone: Visit; extension: Visit }>();
  for (const c of cases) {
    result[c.name] = {
      alone: figures([0]),
      extension: figures([0]),
      samples: { alone: [], extension: [] },
    };
    tabs.set(c, { alone: await newTab.alone(), extension: await newTab.extension() });
  }
  for (let round = -WARM_UP; round < SAMPLES; round++) {
    for (const c of cases) {
      const path = `/${c.host.split('.')[0]}/${round + WARM_UP}`;
      const url = `${origin(c.scheme, c.host)}${path}`;
      const upgraded = `${origin('https', c.host)}${path}`;
      const visitBoth = async () => {
        const a = await tabs.get(c)!.alone(url, url);
        await prepare(c);
        const b = await tabs.get(c)!.extension(url, upgraded);
        return { a, b };
      };
      let times = null;
      for (const deadline = Date.now() + READY_MS; times === null;) {
        try {
          times = await visitBoth();
        } catch (error) {
          if (round > -WARM_UP || Date.now() > deadline) throw error;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      if (round < 0) continue;
      result[c.name]!.samples.alone.push(times.a);
      result[c.name]!.samples.extension.push(times.b);
    }
  }
  for (const f of Object.values(result)) {
    f.alone = figures(f.samples.alone);
    f.extension = figures(f.samples.extension);
  }
  return result;
}

/** Playwright's goto resolves on the first page's load: the handoff page's. Waits for the last. */
function chromiumVisit(tab: Page): Visit {
  return async (url, final) => {
    const started = performance.now();
    await tab.goto(url, { waitUntil: 'commit' });
    await tab.waitForURL((u) => u.href === final, { waitUntil: 'load', timeout: 10_000 });
    return performance.now() - started;
  };
}

async function chromiumFigures(
  extensionDir: string,
  origin: (scheme: string, host: string) => string,
): Promise<BrowserFigures> {
  const hostRules = ['*.bench.test'];
  const alone = await launchChromiumAlone(hostRules);
  const ext = await launchWithExtension(extensionDir, hostRules).catch(async (error: unknown) => {
    await alone.close();
    throw error;
  });
  try {
    const devtools = await ext.context.newCDPSession(await ext.context.newPage());
    await devtools.send('ServiceWorker.enable');
    const prepare = async (c: Case) => {
      if (c.coldWorker === true) await devtools.send('ServiceWorker.stopAllWorkers');
    };
    const newTab = {
      alone: async () => chromiumVisit(await alone.context.newPage()),
      extension: async () => chromiumVisit(await ext.context.newPage()),
    };
    return await alternate(CASES, origin, newTab, prepare);
  } finally {
    await ext.close();
    await alone.close();
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

async function firefoxFigures(
  extensionDir: string,
  origin: (scheme: string, host: string) => string,
): Promise<BrowserFigures> {
  const hosts = Object.values(HOSTS);
  const alone = await launchFirefoxAlone(hosts);
  const firefox = await launchFirefoxWithExtension(extensionDir, hosts).catch(
    async (error: unknown) => {
      await alone.close();
      throw error;
    },
  );
  try {
    const newTab = {
      alone: async () => firefoxVisit(await alone.newTab()),
      extension: async () => firefoxVisit(await firefox.newTab()),
    };
    // Firefox's background never stops: no cold-worker case.
    const cases = CASES.filter((c) => c.coldWorker !== true);
    return await alternate(cases, origin, newTab, async () => undefined);
  } finally {
    await firefox.close();
    await alone.close();
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
    results['chromium'] = await chromiumFigures(built.dirs.chromium!, origin);
  if (only === undefined || only === 'firefox')
    results['firefox'] = await firefoxFigures(built.dirs.firefox!, origin);
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
          ...f,
          samples: { alone: tenths(f.samples.alone), extension: tenths(f.samples.extension) },
        },
      ]),
    ),
  ]),
);
process.stdout.write(`${JSON.stringify(summary)}\n\n`);
const ms = (n: number) => n.toFixed(0).padStart(5);
const signed = (n: number) => `${n >= 0 ? '+' : '-'}${Math.abs(n).toFixed(0)}`.padStart(5);
for (const [browser, cases] of Object.entries(results)) {
  process.stdout.write(
    `${browser}, ${SAMPLES} samples a case (ms)    alone med  p90 | extension med  p90 | added med  p90\n`,
  );
  for (const [name, f] of Object.entries(cases)) {
    const added = {
      median: f.extension.median - f.alone.median,
      p90: f.extension.p90 - f.alone.p90,
    };
    process.stdout.write(
      `  ${name.padEnd(34)} ${ms(f.alone.median)} ${ms(f.alone.p90)} |     ${ms(f.extension.median)} ${ms(f.extension.p90)} |` +
        ` ${signed(added.median)} ${signed(added.p90)}\n`,
    );
  }
  const handoff = cases['handoff host'];
  const ruleset = cases['ruleset host'];
  if (browser === 'chromium' && handoff !== undefined && ruleset !== undefined) {
    process.stdout.write(
      `  handoff host vs a plain DNR redirect: ${signed(handoff.extension.median - ruleset.extension.median)} ms median,` +
        ` ${signed(handoff.extension.p90 - ruleset.extension.p90)} ms p90\n`,
    );
  }
  process.stdout.write('\n');
}
process.stdout.write(`total ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
