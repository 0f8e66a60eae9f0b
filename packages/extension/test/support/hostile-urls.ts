/**
 * URLs as an attacker writes them (issue 37), for the differential test between decide() and
 * the DNR rules and for its real-Chromium sample: other hosts in the credentials, path, query
 * and fragment; `@`, `\`, `%2e`, `%40`, `%2f` in the authority and path; trailing dots; upper
 * case; IDN and punycode; IPv4 and IPv6 literals; explicit ports; very long URLs.
 */
import fc from 'fast-check';

/** Hosts with relaxing state in the differential's worlds (see RELAXABLE). */
export const RELAXED_HOSTS = [
  'site.test',
  'plain.test',
  'once.test',
  'loop.test',
  'bank.test',
  'known.test',
] as const;
/** Hosts the test rulesets cover. */
export const RULESET_HOSTS = [
  'bank.test',
  'www.bank.test',
  'shop.test',
  'www.shop.test',
  'sub.wild.test',
] as const;

/**
 * Rulesets covering RULESET_HOSTS: a scheme-only rule (compiled to upgradeScheme), a host-moving
 * regex rule (compiled to a substitution), an exclusion, and a left-wildcard target.
 */
export const DIFF_RULESETS: readonly string[] = [
  `<ruleset name="Bank">
  <target host="bank.test"/><target host="www.bank.test"/>
  <exclusion pattern="^http://bank\\.test/public/"/>
  <rule from="^http:" to="https:"/>
</ruleset>`,
  `<ruleset name="Shop">
  <target host="shop.test"/><target host="www.shop.test"/>
  <rule from="^http://(?:www\\.)?shop\\.test/" to="https://www.shop.test/"/>
</ruleset>`,
  `<ruleset name="Wild">
  <target host="*.wild.test"/>
  <rule from="^http://([a-z]+)\\.wild\\.test/" to="https://$1.wild.test/"/>
</ruleset>`,
];

/** A user's rule (the user-rule layer): a host with relaxing state elsewhere, an exclusion. */
export const DIFF_USER_RULESET = `<ruleset name="Mine">
  <target host="site.test"/><target host="*.site.test"/>
  <exclusion pattern="^http://site\\.test/keep"/>
  <rule from="^http://(www\\.)?site\\.test/" to="https://site.test/"/>
</ruleset>`;

const OTHER_HOSTS = [
  'other.test',
  'evilsite.test',
  'site.test.evil.test',
  'xsite.test',
  'a.site.test',
  'b.a.site.test',
  'wild.test',
  'x.y.wild.test',
];
const LOCAL_HOSTS = [
  'localhost',
  'app.localhost',
  'intranet',
  'printer.',
  'nas.local',
  'home.arpa',
  'router.home.arpa',
  'x.onion',
  'onion',
  'svc.internal',
  'localhost.example.test',
  'local.test',
];
const IP_HOSTS = [
  '127.0.0.1',
  '127.1',
  '0x7f.0.0.1',
  '2130706433',
  '10.0.0.1',
  '0',
  '100.64.0.1',
  '100.63.255.255',
  '100.128.0.1',
  '169.254.1.1',
  '172.15.0.1',
  '172.16.0.1',
  '172.31.255.255',
  '172.32.0.1',
  '192.168.0.1',
  '192.169.0.1',
  '8.8.8.8',
  '010.0.0.1',
  '1.2.3.4.',
  '[::1]',
  '[::]',
  '[0:0::1]',
  '[fc00::1]',
  '[fdff:1::2]',
  '[fc::1]',
  '[fe80::1]',
  '[febf::1]',
  '[fec0::1]',
  '[fe8::1]',
  '[::ffff:192.168.0.1]',
  '[::ffff:c0a8:1]',
  '[::ffff:8.8.8.8]',
  '[::ffff:100.64.0.1]',
  '[::ffff:0.0.0.1]',
  '[2001:db8::1]',
];
const IDN_HOSTS = [
  'bänk.test',
  'xn--bnk-qla.test',
  'SITE.TEST',
  'Site.Test.',
  'site.test..',
  'bank。test',
  'ｂａｎｋ.test',
];

/** Ways an attacker spells a host: dots encoded, case, trailing dots. */
function spell(host: string, how: number): string {
  switch (how) {
    case 1:
      return host.toUpperCase();
    case 2:
      return `${host}.`;
    case 3:
      return host.replace(/\./g, '%2e');
    case 4:
      return host.replace(/\./g, '%2E');
    default:
      return host;
  }
}

const anyHostName = fc.constantFrom(
  ...RELAXED_HOSTS,
  ...RULESET_HOSTS,
  ...OTHER_HOSTS,
  ...LOCAL_HOSTS,
  ...IP_HOSTS,
  ...IDN_HOSTS,
);
/** A host name to mention elsewhere in a URL. */
const mention = fc.constantFrom(
  ...RELAXED_HOSTS,
  ...RULESET_HOSTS,
  'localhost',
  '127.0.0.1',
  '[::1]',
);
const port = fc.constantFrom(
  '',
  '',
  '',
  ':80',
  ':443',
  ':8080',
  ':0',
  ':65535',
  ':080',
  ':8443',
  ':',
);

const userinfo = fc.oneof(
  { weight: 4, arbitrary: fc.constant('') },
  mention.map((h) => `${h}@`),
  mention.map((h) => `${h}:80@`),
  fc.tuple(mention, mention).map(([a, b]) => `${a}:${b}@`),
  mention.map((h) => `x@${h}@`),
  mention.map((h) => `${h}%40x@`),
  mention.map((h) => `${h}\\@`),
);

const pathPart = fc.oneof(
  fc.constantFrom(
    '',
    'a',
    'public',
    'public/x',
    '..',
    '%2e%2e',
    '%2f',
    'a%2fb',
    '@',
    '%40',
    '\\',
    'x.js',
    'login?',
  ),
  mention.map((h) => `${h}`),
  mention.map((h) => `http://${h}/`),
  mention.map((h) => `@${h}`),
  mention.map((h) => `%40${h}`),
  mention.map((h) => `\\\\${h}`),
);
const path = fc.array(pathPart, { maxLength: 4 }).map((parts) => `/${parts.join('/')}`);
const query = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  mention.map((h) => `?u=http://${h}/`),
  mention.map((h) => `?${h}`),
  mention.map((h) => `?@${h}:80`),
);
const fragment = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  mention.map((h) => `#${h}`),
  mention.map((h) => `#@${h}/`),
  fc.constant('#'),
);
const scheme = fc.constantFrom(
  'http://',
  'http://',
  'http://',
  'HTTP://',
  'hTtP://',
  'http:\\\\',
  'http:/',
  'https://',
);
const long = fc.oneof(
  { weight: 40, arbitrary: fc.constant('') },
  fc.integer({ min: 500, max: 6000 }).map((n) => `/${'a'.repeat(n)}`),
);

/** A URL string as written on a page (parsed by the browser before anything sees it). */
export const hostileUrl: fc.Arbitrary<string> = fc
  .tuple(
    scheme,
    userinfo,
    anyHostName,
    fc.integer({ min: 0, max: 6 }),
    port,
    fc.constantFrom('/', '/', '\\', '?', '#', ''),
    path,
    long,
    query,
    fragment,
  )
  .map(
    ([s, u, h, how, p, sep, pa, lo, q, f]) =>
      `${s}${u}${spell(h, how)}${p}${sep === '/' || sep === '\\' ? sep + pa.slice(1) : sep === '' ? pa : sep}${lo}${q}${f}`,
  );

/** The URL as the browser hands it to the extension (WHATWG), or null when it does not parse. */
export function canonical(raw: string): string | null {
  try {
    return new URL(raw).href;
  } catch {
    return null;
  }
}

/** Every request type Chromium reports. */
export const REQUEST_TYPES = [
  'main_frame',
  'sub_frame',
  'stylesheet',
  'script',
  'image',
  'font',
  'object',
  'xmlhttprequest',
  'ping',
  'csp_report',
  'media',
  'websocket',
  'webtransport',
  'webbundle',
  'other',
] as const;
