import type { IncomingMessage, ServerResponse } from 'node:http';
import { page } from './e2e-site.js';

/**
 * Pages an attacker controls (on evil.example.test), and the victims' answers they lean on, for
 * the hostile tests of both browsers. Every host resolves to the one loopback server.
 *
 * - `/bounce?n=K&host=V`: (evil, HTTPS) redirects to the victim's HTTP URL
 *   `http://V/redir?to=https://evil/bounce?n=K-1…`, which the victim (upgraded) sends back to
 *   evil: K rounds of "another host's HTTPS answer redirects to the victim's HTTP URL" in one
 *   request chain, ending on the victim's `/landed`.
 * - `/redir?to=URL` (any victim, HTTPS): an open redirect, as many sites have.
 * - `/flood?n=N`: a page loading N images from N different hosts over HTTPS.
 * - `/opener?to=URL&n=N`: a button that opens a window and navigates it to URL N times.
 * - `/frames?ext=ORIGIN&to=URL`: frames, opens and navigates to the extension's pages.
 * - `/walk?urls=JSON&gap=MS` or `/walk?flood=N&ms=MS`: a button that opens one window, then
 *   (no further gesture) sends it to each URL in turn, or to N answering hosts (NAV_HOST) for
 *   at most MS milliseconds; each landed page tells the opener it loaded.
 * - `/stopper?off=URL&probe=URL` (served over plain HTTP, at a loopback address HTTPS-first
 *   leaves alone): starts a navigation to `off`, stops it, then loads the image `probe`.
 * - `/slow`: answers after 5 s (a navigation still on its way).
 * - `/nav-landed`: a page that tells its opener it loaded.
 * - lbloop.example.test: its HTTPS answer sends everyone back to HTTP (a real loop).
 */
export const HOSTILE_RULESETS = `
<ruleset name="Victim">
  <target host="victim.example.test"/>
  <rule from="^http:" to="https:"/>
</ruleset>
<ruleset name="Lookbehind Victim">
  <target host="lb.example.test"/>
  <rule from="^http://lb\\.example\\.test(?&lt;!x):" to="https://lb.example.test:"/>
</ruleset>
<ruleset name="Lookbehind Loop">
  <target host="lbloop.example.test"/>
  <rule from="^http://lbloop\\.example\\.test(?&lt;!x):" to="https://lbloop.example.test:"/>
</ruleset>`;

export const FLOOD_HOST = (i: number): string => `f${i}.flood.example.test`;
/** Hosts a page sends one window to, one after the other. */
export const NAV_HOST = (i: number): string => `n${i}.nav.example.test`;
/** A victim's open redirect: `https://host/redir?to=URL` (see `/redir`), at `port`. */
export function openRedirect(host: string, port: number, to: string): string {
  return `https://${host}:${port}/redir?to=${encodeURIComponent(to)}`;
}

const GIF = Buffer.from('R0lGODlhAQABAAAAACw=', 'base64');

export function hostileHandler(
  port: () => number,
): (req: IncomingMessage, res: ServerResponse, secure: boolean) => void {
  return (req, res, secure) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const url = new URL(req.url ?? '/', `http://${host}`);
    const at = (scheme: string, h: string, path: string) => `${scheme}://${h}:${port()}${path}`;
    const redirect = (to: string) => {
      res.writeHead(302, { location: to });
      res.end();
    };
    if (host === 'lbloop.example.test') {
      if (secure) return redirect(`http://${req.headers.host}${req.url}`);
      return page(res, 'plain http page');
    }
    if (url.pathname === '/bounce' && secure) {
      const n = Number(url.searchParams.get('n'));
      const victim = url.searchParams.get('host') ?? '';
      if (n <= 0) return redirect(at('http', victim, '/landed'));
      const back = at(
        'https',
        'evil.example.test',
        `/bounce?n=${n - 1}&host=${encodeURIComponent(victim)}`,
      );
      return redirect(at('http', victim, `/redir?to=${encodeURIComponent(back)}`));
    }
    if (url.pathname === '/redir' && secure) return redirect(url.searchParams.get('to') ?? '/');
    if (url.pathname === '/slow') {
      setTimeout(() => page(res, 'slow'), 5000).unref();
      return;
    }
    if (url.pathname === '/nav-landed')
      return page(
        res,
        `landed ${host} /<script>opener && opener.postMessage('landed', '*');</script>`,
      );
    if (url.pathname === '/walk') {
      const flood = Number(url.searchParams.get('flood') ?? 0);
      const urls = flood > 0 ? [] : (JSON.parse(url.searchParams.get('urls') ?? '[]') as string[]);
      const gap = Number(url.searchParams.get('gap') ?? 700);
      const ms = Number(url.searchParams.get('ms') ?? 0);
      return page(
        res,
        `<button id="go">go</button><script>
        const urls = ${JSON.stringify(urls)};
        const flood = ${flood};
        const landed = () => new Promise((r) => {
          const t = setTimeout(r, ${gap});
          window.onmessage = () => { clearTimeout(t); r(); };
        });
        document.getElementById('go').onclick = async () => {
          const w = window.open('about:blank');
          const end = performance.now() + ${ms};
          let sent = 0;
          if (flood > 0) {
            for (let i = 0; i < flood && performance.now() < end; i++, sent++) {
              w.location = 'http://' + ${JSON.stringify(NAV_HOST(0))}.replace('n0.', 'n' + i + '.') + ':' + ${port()} + '/nav-landed';
              await landed();
            }
          } else {
            for (const u of urls) { w.location = u; sent++; await landed(); }
          }
          document.body.dataset.sent = String(sent);
          document.body.dataset.done = 'true';
        };</script>`,
      );
    }
    if (url.pathname === '/stopper') {
      const off = JSON.stringify(url.searchParams.get('off') ?? '');
      const probe = JSON.stringify(url.searchParams.get('probe') ?? '');
      return page(
        res,
        `stopper<script>
        window.onload = () => {
          location.href = ${off};
          setTimeout(() => {
            window.stop();
            const img = new Image();
            img.onload = img.onerror = () => { document.body.dataset.done = 'true'; };
            img.src = ${probe};
            document.body.appendChild(img);
          }, 300);
        };</script>`,
      );
    }
    if (url.pathname.endsWith('.gif')) {
      res.writeHead(200, { 'content-type': 'image/gif' });
      res.end(GIF);
      return;
    }
    if (url.pathname === '/flood') {
      const n = Number(url.searchParams.get('n'));
      const imgs = Array.from(
        { length: n },
        (_, i) => `<img src="${at('https', FLOOD_HOST(i), '/p.gif')}">`,
      ).join('');
      return page(res, `flood ${imgs}`);
    }
    if (url.pathname === '/opener') {
      const to = JSON.stringify(url.searchParams.get('to') ?? '');
      const n = Number(url.searchParams.get('n'));
      return page(
        res,
        `<button id="go">go</button><script>
        document.getElementById('go').onclick = async () => {
          const w = window.open('about:blank');
          for (let i = 0; i < ${n}; i++) { w.location = ${to}; await new Promise((r) => setTimeout(r, 300)); }
          document.body.dataset.done = 'true';
        };</script>`,
      );
    }
    if (url.pathname === '/frames') {
      const ext = url.searchParams.get('ext') ?? '';
      const to = url.searchParams.get('to') ?? '';
      const forged = [
        `${ext}/ui/fallback.html?url=${encodeURIComponent(to)}&reason=timeout&ticket=${'0'.repeat(32)}`,
        `${ext}/ui/handoff.html#${to}`,
        // The rules' own form, which the worker answers for top-level navigations it saw sent there.
        `${ext}/ui/handoff.html?${to}`,
        `${ext}/ui/popup.html`,
        `${ext}/ui/options.html`,
      ];
      const frames = forged
        .map((src) => `<iframe src="${src.replace(/"/g, '&quot;')}"></iframe>`)
        .join('');
      return page(
        res,
        `frames ${frames}<script>
        for (const src of ${JSON.stringify(forged)}) { try { window.open(src); } catch {} }
        setTimeout(() => { try { location.href = ${JSON.stringify(forged[0])}; } catch {} }, 500);
        </script>`,
      );
    }
    page(res, `${secure ? 'https' : 'http'} ${host} ${url.pathname}`);
  };
}
