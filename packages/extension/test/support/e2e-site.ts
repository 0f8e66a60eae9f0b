import { mkdtempSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Rulesets both browsers' end-to-end tests use, for hosts the browser resolves to the loopback
 * server: a trivial rule with an exclusion, a `$1` host rewrite, one off by default, one with
 * a securecookie, and one whose HTTPS site redirects back to HTTP (see `serveLoopHost`).
 */
export const SHARED_TEST_RULESETS = `
<ruleset name="Plain Example">
  <target host="plain.example.test"/>
  <exclusion pattern="^http://plain\\.example\\.test(?::\\d+)?/excluded/"/>
  <rule from="^http:" to="https:"/>
</ruleset>
<ruleset name="Old to New">
  <target host="old.example.test"/>
  <rule from="^http://old\\.example\\.test:(\\d+)/(.*)" to="https://new.example.test:$1/moved/$2"/>
</ruleset>
<ruleset name="Off Example" default_off="off unless switched on">
  <target host="off.example.test"/>
  <rule from="^http:" to="https:"/>
</ruleset>
<ruleset name="Cookie Example">
  <target host="cookie.example.test"/>
  <securecookie host=".+" name="^sid$"/>
  <rule from="^http:" to="https:"/>
</ruleset>
<ruleset name="Loop Example">
  <target host="loop.example.test"/>
  <rule from="^http:" to="https:"/>
</ruleset>`;

/** Writes each `<ruleset>` of `xml` to its own file in a new temporary directory; returns it. */
export function writeRulesetsDir(xml: string, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [i, ruleset] of xml
    .split('</ruleset>')
    .filter((s) => s.trim())
    .entries()) {
    writeFileSync(join(dir, `r${i}.xml`), `${ruleset.trim()}\n</ruleset>\n`);
  }
  return dir;
}

export function page(
  res: ServerResponse,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(200, { 'content-type': 'text/html', ...headers });
  res.end(`<!doctype html><title>t</title><body>${body}</body>`);
}

/**
 * loop.example.test: the HTTPS site sends everyone back to HTTP, an endless loop without the
 * extension's protection. Returns false for other hosts.
 */
export function serveLoopHost(req: IncomingMessage, res: ServerResponse, secure: boolean): boolean {
  if ((req.headers.host ?? '').replace(/:\d+$/, '') !== 'loop.example.test') return false;
  if (secure) {
    res.writeHead(302, { location: `http://${req.headers.host}${req.url}` });
    res.end();
  } else page(res, 'plain http page');
  return true;
}

/**
 * A ruleset DNR cannot express (RE2 has no lookbehind): its main frames go through the handoff
 * page, except the URLs its exclusion keeps on HTTP.
 */
export const LOOKBEHIND_RULESET = `<ruleset name="Lookbehind Example">
  <target host="lb.example.test"/>
  <exclusion pattern="^http://lb\\.example\\.test:\\d+/keep/"/>
  <rule from="^http://lb\\.example\\.test(?&lt;!x):(\\d+)/old/" to="https://new.example.test:$1/lb/"/>
  <rule from="^http:" to="https:"/>
</ruleset>`;
