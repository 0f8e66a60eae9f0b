import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildExtension } from '../../src/packaging/build.js';
import { writeRulesetsDir } from './e2e-site.js';
import { startDualServer, type DualServer } from './servers.js';

/**
 * A site whose HTTPS answers send some of its subresources back to HTTP, for the subresource
 * loop breaker's tests in both browsers. One loopback port, HTTP and TLS (startDualServer):
 *
 *   bounce.example.test   over HTTPS: `/page` is a page with an image `/p.gif`; `/go?to=URL`
 *                         redirects to URL (an open redirect); any other path (the favicon
 *                         too) redirects to its own http:// form.
 *                         Over HTTP: everything answers (images as a GIF).
 *   other.example.test    answers everything over both schemes (the same paths, another host).
 *   embed.uncovered.test  `/embed`: an HTTP page (no ruleset covers it) embedding http://
 *                         subresources of both hosts, of several types.
 *
 * The rulesets (LOOP_SITE_RULESETS) upgrade bounce and other: what the browser then does with
 * bounce's subresources is an HTTPS->HTTP->HTTPS loop, unless something breaks it.
 */
export const LOOP_SITE_HOSTS = [
  'bounce.example.test',
  'other.example.test',
  'embed.uncovered.test',
];

export const LOOP_SITE_RULESETS = `
<ruleset name="Bounce Example">
  <target host="bounce.example.test"/>
  <target host="other.example.test"/>
  <rule from="^http:" to="https:"/>
</ruleset>`;

/** A 1x1 transparent GIF. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** The subresources `/embed` loads, by the id its element or its result is reported under. */
export const EMBEDDED = {
  img: 'bounce.example.test /i.gif',
  script: 'bounce.example.test /s.js',
  fetch: 'bounce.example.test /d.txt',
  otherImg: 'other.example.test /i.gif',
  // bounce's open redirect to other's image: bounce's HTTPS sends it to other's http:// URL.
  redirected: 'other.example.test /r.gif',
} as const;

function embedPage(port: number): string {
  const at = (host: string, path: string) => `http://${host}:${port}${path}`;
  const b = (p: string) => at('bounce.example.test', p);
  const o = (p: string) => at('other.example.test', p);
  const go = `${b('/go')}?to=${encodeURIComponent(o('/r.gif'))}`;
  const img = (id: string, src: string) =>
    `<img id="${id}" src="${src}" onload="this.dataset.state='loaded'" onerror="this.dataset.state='failed'">`;
  return [
    img('img', b('/i.gif')),
    img('otherImg', o('/i.gif')),
    img('redirected', go),
    `<script async src="${b('/s.js')}" onerror="document.body.dataset.script='failed'"></script>`,
    `<script>fetch(${JSON.stringify(b('/d.txt'))}, { mode: 'no-cors' }).then(
      () => { document.body.dataset.fetch = 'loaded'; },
      () => { document.body.dataset.fetch = 'failed'; });</script>`,
  ].join('\n');
}

function answer(res: ServerResponse, path: string, body: string): void {
  if (path.endsWith('.gif')) {
    res.writeHead(200, { 'content-type': 'image/gif' });
    res.end(GIF);
  } else if (path.endsWith('.js')) {
    res.writeHead(200, { 'content-type': 'text/javascript' });
    res.end("document.body.dataset.script = 'loaded';");
  } else if (path === '/favicon.ico') {
    res.writeHead(404);
    res.end();
  } else {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>t</title><body>${body}</body>`);
  }
}

export async function startLoopSite(): Promise<DualServer> {
  let port = 0;
  const server = await startDualServer((req: IncomingMessage, res, secure) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const path = url.pathname;
    if (host === 'bounce.example.test' && secure && path !== '/page') {
      const to =
        path === '/go'
          ? (url.searchParams.get('to') ?? '/')
          : `http://${req.headers.host}${req.url}`;
      res.writeHead(302, { location: to });
      res.end();
      return;
    }
    if (host === 'embed.uncovered.test' && path === '/embed')
      return answer(res, path, embedPage(port));
    // bounce's HTTPS page: its favicon and its own image are sent back to HTTP.
    if (host === 'bounce.example.test' && path === '/page')
      return answer(
        res,
        path,
        `page <img id="img" src="/p.gif" onload="this.dataset.state='loaded'" onerror="this.dataset.state='failed'">`,
      );
    answer(res, path, `${secure ? 'https' : 'http'} ${host} ${path}`);
  });
  port = server.port;
  return server;
}

/** The requests the site saw for `host path` (query aside), each as whether it came over TLS. */
export function schemesSeen(server: DualServer, hostPath: string): boolean[] {
  return server.log
    .filter((r) => `${r.host} ${r.path.split('?')[0]}` === hostPath)
    .map((r) => r.secure);
}

/** The subresources of `/embed` whose HTTPS answer sends them back to HTTP. */
export const BOUNCING = [EMBEDDED.img, EMBEDDED.script, EMBEDDED.fetch];

/** What `/embed` shows once everything it loads has loaded. */
export const EMBEDDED_LOADED = {
  img: 'loaded',
  otherImg: 'loaded',
  redirected: 'loaded',
  script: 'loaded',
  fetch: 'loaded',
};

/** An expression for the page: how each of `/embed`'s subresources fared so far. */
export const EMBEDDED_STATES = `(() => {
  const img = (id) => document.getElementById(id)?.dataset.state ?? 'pending';
  const body = document.body?.dataset ?? {};
  return { img: img('img'), otherImg: img('otherImg'), redirected: img('redirected'),
    script: body.script ?? 'pending', fetch: body.fetch ?? 'pending' };
})()`;

/**
 * Requests by scheme for each of `hostPaths`, once a second has passed without a new one (a
 * loop still going would keep adding them: ~140 a second in Chromium).
 */
export async function settledCounts(
  server: DualServer,
  hostPaths: readonly string[],
): Promise<Record<string, { https: number; http: number }>> {
  const read = () =>
    Object.fromEntries(
      hostPaths.map((hp) => {
        const seen = schemesSeen(server, hp);
        return [hp, { https: seen.filter((s) => s).length, http: seen.filter((s) => !s).length }];
      }),
    );
  let last = JSON.stringify(read());
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = JSON.stringify(read());
    if (now === last) return read();
    last = now;
  }
  throw new Error(`still requesting after 10 s: ${last}`);
}

/** The site and one browser with the extension built over LOOP_SITE_RULESETS. */
export interface LoopSiteIn<B> {
  server: DualServer;
  browser: B;
  /** The site's http:// address of `path` on `host`. */
  at(host: string, path: string): string;
  close(): Promise<void>;
}

/** The site and a build for `browser` (its own scratch folders, removed on close). */
export async function loopSiteBuild(browser: 'chromium' | 'firefox') {
  const rulesDir = writeRulesetsDir(LOOP_SITE_RULESETS, `httpsify-loop-${browser}-rules-`);
  const outDir = mkdtempSync(join(tmpdir(), `httpsify-loop-${browser}-ext-`));
  const built = await buildExtension({
    rulesets: [rulesDir],
    outDir,
    browsers: [browser],
    zip: false,
  });
  const server = await startLoopSite();
  const scratch = () => {
    for (const dir of [rulesDir, outDir]) rmSync(dir, { recursive: true, force: true });
  };
  return { dir: built.dirs[browser] as string, server, scratch };
}
