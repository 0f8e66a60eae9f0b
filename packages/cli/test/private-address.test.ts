import { describe, expect, it } from 'vitest';
import { isPrivateAddress, refusingPrivateLookup } from '../src/fetch-test/private-address.js';
import type { LookupFunction } from '../src/fetch-test/resolve-option.js';

describe('private addresses (links --verify)', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    '[::1]',
    'fe80::1',
    'fd12:3456::1',
    'fc00::1',
    '::ffff:127.0.0.1',
    '::ffff:10.1.2.3',
    '::ffff:7f00:1',
  ])('%s is private', (ip) => expect(isPrivateAddress(ip)).toBe(true));

  it.each([
    '8.8.8.8',
    '172.32.0.1',
    '192.169.0.1',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    'example.org',
  ])('%s is not', (ip) => expect(isPrivateAddress(ip)).toBe(false));

  it('refuses a name when any of its addresses is private; trusts the --resolve names', async () => {
    const answers: Record<string, string[]> = {
      'mixed.test': ['93.184.216.34', '127.0.0.1'],
      'public.test': ['93.184.216.34'],
      'mine.test': ['127.0.0.1'],
    };
    const base: LookupFunction = (host, _options, callback) =>
      callback(
        null,
        (answers[host] ?? []).map((address) => ({ address, family: 4 })),
      );
    const lookup = refusingPrivateLookup(base, new Set(['mine.test']));
    const ask = (host: string) =>
      new Promise<string>((resolve) =>
        lookup(host, {}, (err, address) =>
          resolve(err ? `error: ${err.message}` : String(address)),
        ),
      );
    expect(await ask('mixed.test')).toMatch(
      /^error: refused: mixed\.test resolves to 127\.0\.0\.1/,
    );
    expect(await ask('public.test')).toBe('93.184.216.34');
    expect(await ask('mine.test')).not.toMatch(/refused/);
  });
});
