import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { isDefaultActive, type Ruleset } from '../src/index.js';
import { parseRulesetXml } from '../src/parse/index.js';
import { compileDnr, DnrEmulator, type DnrRule } from '../src/dnr/index.js';
import { groupHostRedirects } from '../src/dnr/redirect-groups.js';
import { corpusXmlFiles, readOracle, type OracleCase } from './support/corpus.js';

const ids = (rules: Omit<DnrRule, 'id'>[]): DnrRule[] => rules.map((r, i) => ({ ...r, id: i + 1 }));
const redirects = (rules: readonly Omit<DnrRule, 'id'>[]) =>
  rules.filter((r) => r.action.type === 'redirect').length;

/**
 * The library's rules as a dynamic set compiles them, with and without its host-swap redirects
 * grouped: the groups must send every URL exactly where their members did, and no other URL
 * anywhere (a subdomain, a port, credentials, a trailing dot, another path).
 */
describe('host-swap redirects grouped under one substitution', () => {
  let rulesets: Ruleset[];
  let oracle: OracleCase[];

  beforeAll(async () => {
    rulesets = corpusXmlFiles().flatMap((file) => {
      const { ruleset } = parseRulesetXml(readFileSync(file, 'utf8'), file);
      return ruleset && isDefaultActive(ruleset) ? [ruleset] : [];
    });
    oracle = await readOracle();
  });

  it('fire where their members did and send each URL to the same place', () => {
    const plain = compileDnr(rulesets, {
      isActive: () => true,
      regexLimit: 900,
      ruleLimit: 30_000,
    }).rules;
    const grouped = ids(groupHostRedirects(plain, 0));
    // Most of the 2018 library's redirects are such swaps.
    expect(redirects(plain)).toBeGreaterThan(7_000);
    expect(redirects(grouped)).toBeLessThan(redirects(plain) - 3_000);
    const groups = grouped.filter(
      (r) =>
        r.action.type === 'redirect' &&
        r.condition.requestDomains !== undefined &&
        r.condition.regexFilter !== undefined,
    );
    const hosts = groups.flatMap((r) => r.condition.requestDomains ?? []);
    const urls = [...oracle.map((c) => c.url)];
    for (const h of hosts)
      for (const form of [
        'http://H/',
        'http://H/a/b?c=d',
        'http://z.H/',
        'http://www.H/x',
        'http://H:8080/',
        'http://u:p@H/',
        'http://H./',
        'https://H/',
        'http://H',
      ])
        urls.push(form.replace('H', h));
    const a = new DnrEmulator(plain as DnrRule[]);
    const b = new DnrEmulator(grouped);
    let changed = 0;
    const differ: string[] = [];
    for (const url of urls)
      for (const type of ['main_frame', 'image'] as const) {
        const x = a.match({ url, type }).redirectUrl;
        if (x !== null) changed++;
        if (x !== b.match({ url, type }).redirectUrl)
          differ.push(`${type} ${url}: ${x} / ${b.match({ url, type }).redirectUrl}`);
      }
    expect(differ.slice(0, 5)).toEqual([]);
    expect(changed).toBeGreaterThan(hosts.length);
  });

  it('group only as far as the limit asks, largest groups first', () => {
    const plain = compileDnr(rulesets, {
      isActive: () => true,
      regexLimit: 900,
      ruleLimit: 30_000,
    }).rules;
    const limit = redirects(plain) - 1_000;
    const grouped = groupHostRedirects(plain, limit);
    expect(redirects(grouped)).toBeLessThanOrEqual(limit);
    // The biggest group alone saves more than 1,000 (one regex spent).
    expect(grouped.filter((r) => r.condition.regexFilter !== undefined).length).toBe(
      plain.filter((r) => r.condition.regexFilter !== undefined).length + 1,
    );
    expect(groupHostRedirects(plain, redirects(plain))).toEqual(plain);
  });

  it('lets the compiler fit a redirect limit, spending its regexes on the groups', () => {
    const c = compileDnr(rulesets, {
      isActive: () => true,
      regexLimit: 900,
      ruleLimit: 30_000,
      redirectLimit: 4_000,
    });
    expect(redirects(c.rules)).toBeLessThanOrEqual(4_000);
    expect(c.report.regexRuleCount).toBeLessThanOrEqual(900);
    expect(c.report.overLimits).toEqual([]);
    expect(c.report.rulesetsComplete / c.report.rulesetsConsidered).toBeGreaterThan(0.95);
  });
});
