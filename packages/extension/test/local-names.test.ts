import { DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { localNameConditions } from '../src/dnr/local-name-rules.js';
import { isHttpsFirstExempt } from '../src/site-rules/exempt.js';
import { LOCAL_DOMAINS, LOCAL_IPV4 } from '../src/site-rules/local-names.js';

/**
 * One table of local names and addresses (site-rules/local-names.ts), read twice: the code
 * decide() asks and the DNR rules Chromium runs. On generated hosts, as the URL parser writes
 * them, both readings agree.
 */
const rules: DnrRule[] = [
  {
    id: 1,
    priority: 1,
    action: { type: 'upgradeScheme' },
    condition: { urlFilter: '|http://', resourceTypes: ['main_frame'] },
  },
  ...localNameConditions().map((condition, i): DnrRule => ({
    id: i + 2,
    priority: 3,
    action: { type: 'allow' },
    condition,
  })),
];
const emulator = new DnrEmulator(rules);
const exemptByRules = (url: string) =>
  emulator.match({ url, type: 'main_frame' }).redirectUrl === null;

const octet = fc.oneof(
  fc.integer({ min: 0, max: 255 }),
  fc.constantFrom(0, 10, 63, 64, 100, 127, 128, 169, 172, 15, 16, 31, 32, 192, 168, 254, 255),
);
const ipv4 = fc.oneof(
  fc.tuple(octet, octet, octet, octet).map((o) => o.join('.')),
  // Around each block's edges.
  fc
    .tuple(fc.constantFrom(...LOCAL_IPV4), fc.integer({ min: -2, max: 2 }), fc.boolean())
    .map(([[base, bits], d, end]) => {
      const n = (base + (end ? 2 ** (32 - bits) - 1 : 0) + d + 2 ** 32) % 2 ** 32;
      return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
    }),
);
const hextet = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }),
  fc.constantFrom(
    0,
    1,
    0xfc,
    0xfbff,
    0xfc00,
    0xfdff,
    0xfe00,
    0xfe7f,
    0xfe80,
    0xfebf,
    0xfec0,
    0xffff,
    0xa9fe,
    0xc0a8,
    0x7f00,
    0x6440,
    0x6480,
  ),
);
const ipv6 = fc.oneof(
  fc
    .array(hextet, { minLength: 8, maxLength: 8 })
    .map((h) => `[${h.map((x) => x.toString(16)).join(':')}]`),
  fc.tuple(hextet, hextet).map(([a, b]) => `[${a.toString(16)}::${b.toString(16)}]`),
  fc.tuple(hextet, hextet).map(([a, b]) => `[::ffff:${a.toString(16)}:${b.toString(16)}]`),
  ipv4.map((v4) => `[::ffff:${v4}]`),
  fc.constantFrom('[::]', '[::1]', '[::2]', '[0::0:1]', '[1::]'),
);
const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
const name = fc.oneof(
  fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => l.join('.')),
  fc
    .tuple(
      fc.array(label, { maxLength: 2 }),
      fc.constantFrom(...LOCAL_DOMAINS, 'arpa', 'localhost.test', 'local.test'),
    )
    .map(([l, d]) => [...l, d].join('.')),
  fc.constantFrom('ÿntranet', 'bücher.local', 'ｌｏｃａｌｈｏｓｔ', 'printer.', 'a..'),
);
const port = fc.constantFrom('', ':8080', ':80', ':1');

describe('local names: the code check and the DNR rules are one table', () => {
  it('agree on generated names, IPv4 and IPv6 literals', () => {
    fc.assert(
      fc.property(fc.oneof(ipv4, ipv6, name), port, (host, p) => {
        let url: URL;
        try {
          url = new URL(`http://${host}${p}/x`);
        } catch {
          return;
        }
        // A trailing-dot host goes to the handoff page first (handoff-rules.ts), which asks the code.
        if (url.hostname.endsWith('.')) return;
        expect(exemptByRules(url.href), url.href).toBe(isHttpsFirstExempt(url.hostname));
      }),
      {
        numRuns: Number(process.env.HTTPSIFY_DIFF_RUNS ?? 50_000),
        seed: Number(process.env.HTTPSIFY_DIFF_SEED ?? 39),
      },
    );
  });

  it('covers both answers', () => {
    const urls = [
      'http://10.1.2.3/',
      'http://[fc00::1]/',
      'http://[::ffff:c0a8:1]/',
      'http://home.arpa/',
      'http://x.internal:81/',
      'http://intranet/',
    ];
    for (const u of urls)
      expect([u, exemptByRules(u), isHttpsFirstExempt(new URL(u).hostname)]).toEqual([
        u,
        true,
        true,
      ]);
    for (const u of [
      'http://8.8.8.8/',
      'http://[fc::1]/',
      'http://[fec0::1]/',
      'http://localhost.test/',
      'http://intranet@bank.test/',
      'http://bank.test/?localhost',
    ])
      expect([u, exemptByRules(u), isHttpsFirstExempt(new URL(u).hostname)]).toEqual([
        u,
        false,
        false,
      ]);
  });
});
