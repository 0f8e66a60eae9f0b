/**
 * httpsify's bundled default rulesets (packages/engine/rulesets/*.xml): they must parse
 * cleanly, every rule, exclusion and target must be exercised by the ruleset's own
 * `<test url>`s, and the engine must rewrite (or leave alone) each test URL as the
 * ruleset says.
 *
 * Which rule or exclusion a test belongs to is computed here with plain RegExp and
 * String.prototype.replace, independently of the engine: a test attaches to the first
 * exclusion that matches it, else to the first rule whose replacement changes it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../src/index.js';
import { parseRulesetXml } from '../src/parse/index.js';
import type { Ruleset } from '../src/model/ruleset.js';
import { isDefaultActive } from '../src/model/ruleset.js';
import { defaultRulesetsDir, loadRulesets } from '../src/node/index.js';

const rulesetsDir = resolve(dirname(fileURLToPath(import.meta.url)), '../rulesets');
const files = readdirSync(rulesetsDir)
  .filter((f) => f.endsWith('.xml'))
  .sort();

interface Loaded {
  file: string;
  text: string;
  ruleset: Ruleset;
}

const loaded: Loaded[] = [];
const parseFailures: string[] = [];
for (const file of files) {
  const text = readFileSync(join(rulesetsDir, file), 'utf8');
  const { ruleset, diagnostics } = parseRulesetXml(text, file);
  for (const d of diagnostics) {
    if (d.severity === 'error')
      parseFailures.push(`${d.file}:${d.line}:${d.column}: ${d.code}: ${d.message}`);
  }
  if (ruleset === null) parseFailures.push(`${file}: no ruleset`);
  else loaded.push({ file, text, ruleset });
}

type Owner =
  { kind: 'exclusion'; index: number } | { kind: 'rule'; index: number; result: string } | null;

/** The first exclusion matching `url`, else the first rule that changes it (reference semantics). */
function ownerOf(ruleset: Ruleset, url: string): Owner {
  const ex = ruleset.exclusions.findIndex((e) => new RegExp(e.pattern).test(url));
  if (ex >= 0) return { kind: 'exclusion', index: ex };
  for (let i = 0; i < ruleset.rules.length; i++) {
    const rule = ruleset.rules[i]!;
    const result = url.replace(new RegExp(rule.from), rule.to);
    if (result !== url) return { kind: 'rule', index: i, result };
  }
  return null;
}

/** Target semantics: exact host; `*.x` any depth below x; otherwise `*` stands for one label. */
function targetMatches(target: string, host: string): boolean {
  if (target.startsWith('*.')) return host.endsWith(target.slice(1));
  const t = target.split('.');
  const h = host.split('.');
  return t.length === h.length && t.every((label, i) => label === '*' || label === h[i]);
}

describe('default rulesets: files', () => {
  it('exist', () => {
    expect(files.length).toBeGreaterThanOrEqual(15);
  });

  it('parse with no error diagnostics', () => {
    expect(parseFailures).toEqual([]);
    expect(loaded.length).toBe(files.length);
  });

  it('are tab-indented, double-quoted, and start with a header comment', () => {
    for (const { file, text } of loaded) {
      expect(text.startsWith('<!--'), `${file}: header comment`).toBe(true);
      expect(text.endsWith('\n'), `${file}: final newline`).toBe(true);
      const lines = text.split('\n');
      lines.forEach((line, i) => {
        expect(/^ +\S/.test(line), `${file}:${i + 1}: space indentation`).toBe(false);
        expect(/\s$/.test(line), `${file}:${i + 1}: trailing whitespace`).toBe(false);
        if (line.trimStart().startsWith('<') && !line.trimStart().startsWith('<!--')) {
          expect(/=\s*'/.test(line), `${file}:${i + 1}: single-quoted attribute`).toBe(false);
        }
      });
    }
  });

  it('have unique ruleset names and are all on by default', () => {
    const names = loaded.map((l) => l.ruleset.name);
    expect(new Set(names).size).toBe(names.length);
    for (const { file, ruleset } of loaded) expect(isDefaultActive(ruleset), file).toBe(true);
  });

  it('never list the same target host twice, so each host has exactly one owner', () => {
    const owner = new Map<string, string>();
    for (const { file, ruleset } of loaded) {
      for (const t of ruleset.targets) {
        expect(owner.get(t.host), `${file}: target ${t.host}`).toBeUndefined();
        owner.set(t.host, file);
      }
    }
  });

  it('use regexes that compile as plain JS RegExp and escape the dots of host names', () => {
    for (const { file, ruleset } of loaded) {
      const patterns = [
        ...ruleset.rules.map((r) => r.from),
        ...ruleset.exclusions.map((e) => e.pattern),
        ...ruleset.secureCookies.flatMap((c) => [c.host, c.name]),
      ];
      for (const p of patterns) expect(() => new RegExp(p), `${file}: ${p}`).not.toThrow();
      for (const p of [
        ...ruleset.rules.map((r) => r.from),
        ...ruleset.exclusions.map((e) => e.pattern),
      ]) {
        // Host part of an anchored pattern: between "^http://" and the first "/".
        const host = /^\^http:\/\/([^/]*)\//.exec(p)?.[1];
        if (host === undefined) continue;
        const outsideClasses = host.replace(/\[[^\]]*\]/g, '').replace(/\\./g, '');
        expect(outsideClasses.includes('.'), `${file}: unescaped dot in ${p}`).toBe(false);
      }
    }
  });
});

describe.each(loaded.map((l) => [l.file, l] as const))('%s', (_file, { ruleset }) => {
  const owners = ruleset.tests.map((t) => ({ url: t.url, owner: ownerOf(ruleset, t.url) }));

  it('has well-formed, distinct http test URLs', () => {
    expect(ruleset.tests.length).toBeGreaterThan(0);
    const urls = ruleset.tests.map((t) => t.url);
    expect(new Set(urls).size, 'duplicate test URL').toBe(urls.length);
    for (const url of urls) {
      expect(url.startsWith('http://'), url).toBe(true);
      // Written in WHATWG-normalised form, so plain RegExp results equal the engine's.
      expect(new URL(url).href, url).toBe(url);
    }
  });

  it('attaches every test to an exclusion or a rule', () => {
    for (const { url, owner } of owners)
      expect(owner, `no rule or exclusion applies to ${url}`).not.toBeNull();
  });

  it('exercises every rule and every exclusion', () => {
    ruleset.rules.forEach((rule, i) => {
      const n = owners.filter((o) => o.owner?.kind === 'rule' && o.owner.index === i).length;
      expect(n, `rule ${rule.from} -> ${rule.to} has no test`).toBeGreaterThan(0);
    });
    ruleset.exclusions.forEach((ex, i) => {
      const n = owners.filter((o) => o.owner?.kind === 'exclusion' && o.owner.index === i).length;
      expect(n, `exclusion ${ex.pattern} has no test`).toBeGreaterThan(0);
    });
  });

  it('covers every target with a test URL (wildcards with at least 3 non-excluded ones)', () => {
    for (const { url } of owners) {
      const host = new URL(url).hostname;
      expect(
        ruleset.targets.some((t) => targetMatches(t.host, host)),
        `no target applies to ${url}`,
      ).toBe(true);
    }
    for (const t of ruleset.targets) {
      const matching = owners.filter((o) => targetMatches(t.host, new URL(o.url).hostname));
      expect(matching.length, `target ${t.host} has no test`).toBeGreaterThan(0);
      if (t.host.includes('*')) {
        const rewritten = matching.filter((o) => o.owner?.kind === 'rule');
        expect(
          rewritten.length,
          `wildcard target ${t.host} needs 3 non-excluded tests`,
        ).toBeGreaterThanOrEqual(3);
      }
    }
  });

  it('only rewrites to https URLs', () => {
    for (const { url, owner } of owners) {
      if (owner?.kind !== 'rule') continue;
      expect(owner.result.startsWith('https://'), `${url} -> ${owner.result}`).toBe(true);
      expect(new URL(owner.result).protocol).toBe('https:');
    }
  });
});

describe('default rulesets: engine', () => {
  const rulesets = loaded.map((l) => l.ruleset);
  const engine = createEngine(rulesets);

  it('loads every ruleset', () => {
    expect(engine.rulesetCount).toBe(rulesets.length);
  });

  it('rewrites each non-excluded test URL with its own ruleset, as the rules say', () => {
    for (const { ruleset } of loaded) {
      for (const { url } of ruleset.tests) {
        const owner = ownerOf(ruleset, url);
        if (owner?.kind !== 'rule') continue;
        const got = engine.rewriteWithRuleset(url);
        expect({ url, ...got }).toEqual({ url, rewritten: owner.result, ruleset: ruleset.name });
        expect(engine.rewrite(url)).toBe(owner.result);
      }
    }
  });

  it('leaves each excluded test URL alone', () => {
    for (const { ruleset } of loaded) {
      for (const { url } of ruleset.tests) {
        if (ownerOf(ruleset, url)?.kind !== 'exclusion') continue;
        const got = engine.rewriteWithRuleset(url);
        expect(got.ruleset, `${url} rewritten by its own ruleset despite the exclusion`).not.toBe(
          ruleset.name,
        );
        // No other default ruleset shares these hosts, so nothing rewrites them at all.
        expect(engine.rewrite(url), url).toBeNull();
      }
    }
  });

  const expectations: Array<[string, string | null]> = [
    ['http://en.wikipedia.org/wiki/Example', 'https://en.wikipedia.org/wiki/Example'],
    ['http://wikipedia.org/', 'https://www.wikipedia.org/'],
    ['http://ja.m.wikipedia.org/wiki/HTTPS', 'https://ja.m.wikipedia.org/wiki/HTTPS'],
    [
      'http://secure.wikimedia.org/wikipedia/de/wiki/Berlin',
      'https://de.wikipedia.org/wiki/Berlin',
    ],
    ['http://wikisource.org/wiki/Main_Page', 'https://wikisource.org/wiki/Main_Page'],
    ['http://wiktionary.org/', 'https://www.wiktionary.org/'],
    ['http://download.wikimedia.org/enwiki/', null],
    ['http://google.com/search?q=eff', 'https://www.google.com/search?q=eff'],
    ['http://www.google.co.uk/', 'https://www.google.co.uk/'],
    ['http://google.com.au/maps', 'https://www.google.com.au/maps'],
    ['http://www.google.de/search?q=bilder&tbm=isch', null],
    ['http://www.google.com/imgres?imgurl=x', null],
    ['http://encrypted.google.com/search?q=tor', 'https://www.google.com/search?q=tor'],
    ['http://mail.google.com/mail/?shva=1', 'https://mail.google.com/mail/?shva=1'],
    ['http://gmail.com/', 'https://gmail.com/'],
    ['http://www.googlemail.com/', 'https://www.googlemail.com/'],
    ['http://docs.google.com/', 'https://docs.google.com/'],
    ['http://maps.google.co.uk/maps?q=London', 'https://maps.google.co.uk/maps?q=London'],
    ['http://voice.google.com/', 'https://voice.google.com/'],
    ['http://news.google.com/newspapers?id=1', null],
    ['http://facebook.com/eff', 'https://www.facebook.com/eff'],
    ['http://apps.facebook.com/someapp/', null],
    ['http://www.twitter.com/eff', 'https://twitter.com/eff'],
    ['http://m.twitter.com/', 'https://mobile.twitter.com/'],
    ['http://status.twitter.com/', null],
    ['http://www.identi.ca/', 'https://identi.ca/'],
    ['http://ddg.gg/?q=eff', 'https://duckduckgo.com/?q=eff'],
    ['http://www.duckduckgo.com/?q=eff', 'https://duckduckgo.com/?q=eff'],
    ['http://ixquick.de/', 'https://www.ixquick.de/'],
    ['http://startpage.com/', 'https://www.startpage.com/'],
    ['http://nytimes.com/', 'https://www.nytimes.com/'],
    ['http://graphics8.nytimes.com/images/logo.gif', 'https://static01.nyt.com/images/logo.gif'],
    ['http://opinionator.blogs.nytimes.com/', null],
    ['http://washingtonpost.com/', 'https://www.washingtonpost.com/'],
    ['http://www.washingtonpost.com/wp-dyn/content/article/2009/01/01/AR1.html', null],
    ['http://eff.org/', 'https://www.eff.org/'],
    ['http://mozilla.com/firefox/', 'https://www.mozilla.org/firefox/'],
    ['http://addons.mozilla.org/', 'https://addons.mozilla.org/'],
    ['http://download.mozilla.org/?product=firefox', null],
    ['http://torproject.org/', 'https://www.torproject.org/'],
    ['http://check.torproject.org/', 'https://check.torproject.org/'],
    ['http://noisebridge.net/wiki/Main_Page', 'https://www.noisebridge.net/wiki/Main_Page'],
    ['http://bugs.gentoo.org/show_bug.cgi?id=1', 'https://bugs.gentoo.org/show_bug.cgi?id=1'],
    // Not covered by any default ruleset.
    ['http://example.com/', null],
    ['http://www.google.example.co.uk/', null],
    ['http://gentoo.org/', null],
  ];

  it.each(expectations)('rewrites %s to %s', (url, expected) => {
    expect(engine.rewrite(url)).toBe(expected);
  });

  const cookies: Array<[{ domain: string; name: string }, boolean]> = [
    [{ domain: '.google.com', name: 'NID' }, true],
    [{ domain: '.google.co.uk', name: 'SID' }, true],
    [{ domain: '.google.com', name: 'PREF' }, false],
    [{ domain: 'mail.google.com', name: 'GX' }, true],
    [{ domain: '.facebook.com', name: 'c_user' }, true],
    [{ domain: '.wikipedia.org', name: 'centralauth_Session' }, true],
    [{ domain: 'bugs.gentoo.org', name: 'Bugzilla_login' }, true],
    [{ domain: 'trac.torproject.org', name: 'trac_auth' }, true],
    // The host pattern matches, but the ruleset excludes this host, so securing it is unsafe.
    [{ domain: 'download.wikimedia.org', name: 'session' }, false],
    [{ domain: 'example.com', name: 'SID' }, false],
  ];

  it.each(cookies)('secures cookie %o: %s', (cookie, expected) => {
    expect(engine.shouldSecureCookie(cookie)).toBe(expected);
  });
});

describe('default rulesets: node loader', () => {
  it('defaultRulesetsDir() is this directory and loads the same rulesets', async () => {
    expect(resolve(defaultRulesetsDir())).toBe(rulesetsDir);
    const result = loadRulesets([defaultRulesetsDir()]);
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(result.rulesets.map((r) => r.name)).toEqual(loaded.map((l) => l.ruleset.name));
    expect(result.engine.rewrite('http://en.wikipedia.org/wiki/Example')).toBe(
      'https://en.wikipedia.org/wiki/Example',
    );
  });
});
