import { describe, expect, it } from 'vitest';
import { compileBundle } from '../src/bundle/write.js';
import {
  ChannelError,
  checkPublicJwk,
  generateSigningKeyPair,
  gunzipLimited,
  gzipBytes,
  parseAdvertisedTimestamp,
  parseChannelDefinition,
  ScopedEngine,
  scopedEngineFromChannels,
  secondsUntilChannelCheck,
  secondsUntilNextCheck,
  selectActiveChannels,
  signBytes,
  verifySignature,
  channelFileUrl,
  type ChannelRecord,
  channelBinding,
  destinationPolicy,
  ruleDestination,
} from '../src/channels/index.js';
import { loadBundle } from '../src/match/engine.js';
import type { Ruleset } from '../src/model/ruleset.js';

function ruleset(name: string, host: string, from = '^http:', to = 'https:'): Ruleset {
  return {
    name,
    targets: [{ host }],
    rules: [{ from, to }],
    exclusions: [],
    secureCookies: [],
    tests: [],
  };
}

const key = await generateSigningKeyPair(3072);
const definition = {
  format: 2,
  name: 'Onion',
  urlPrefix: 'https://rules.example/v2/',
  rootKey: key.publicKey,
  scope: '^https?://[a-z0-9-]+\\.securedrop\\.tor\\.onion/',
  destinations: [] as string[],
  minTimestamp: 1_600_000_000,
  maxAgeDays: 14,
  minKeyVersion: 1,
  replacesDefaults: false,
};
const { format: _format, ...parsedDefinition } = definition;

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof ChannelError ? err.code : `not a ChannelError: ${String(err)}`;
  }
  return undefined;
}

describe('parseChannelDefinition', () => {
  it('accepts a complete definition and defaults destinations, minKeyVersion and replacesDefaults', () => {
    expect(parseChannelDefinition(definition)).toEqual({
      ...parsedDefinition,
      rootKey: { kty: 'RSA', n: key.publicKey.n, e: key.publicKey.e },
    });
    const { destinations: _d, minKeyVersion: _m, replacesDefaults: _r, ...minimal } = definition;
    expect(parseChannelDefinition(minimal)).toMatchObject({
      destinations: [],
      minKeyVersion: 1,
      replacesDefaults: false,
    });
  });

  it('refuses a format 1 definition with what to do instead', () => {
    const old = {
      name: 'Old',
      urlPrefix: 'https://rules.example/',
      publicKey: key.publicKey,
      scope: '',
    };
    expect(() => parseChannelDefinition(old, 'old.json')).toThrow(
      /format 1 channel definition .*httpsify keygen/,
    );
  });

  it.each([
    ['not an object', 'channel'],
    ['unknown field', { ...definition, replaceDefaults: true }],
    ['empty name', { ...definition, name: ' ' }],
    ['http prefix', { ...definition, urlPrefix: 'http://rules.example/' }],
    ['relative prefix', { ...definition, urlPrefix: '/rules/' }],
    ['prefix with query', { ...definition, urlPrefix: 'https://rules.example/?a=1' }],
    ['bad scope', { ...definition, scope: '(' }],
    ['missing scope', { ...definition, scope: undefined }],
    ['missing minTimestamp', { ...definition, minTimestamp: undefined }],
    ['zero maxAgeDays', { ...definition, maxAgeDays: 0 }],
    ['fractional maxAgeDays', { ...definition, maxAgeDays: 1.5 }],
    ['bad destination', { ...definition, destinations: ['https://cdn.example.net/'] }],
    ['upper-case destination', { ...definition, destinations: ['CDN.example.net'] }],
    ['minKeyVersion 0', { ...definition, minKeyVersion: 0 }],
    ['format 3', { ...definition, format: 3 }],
    ['non-boolean replacesDefaults', { ...definition, replacesDefaults: 'yes' }],
    ['missing key', { ...definition, rootKey: undefined }],
    ['private key', { ...definition, rootKey: key.privateKey }],
    ['EC key', { ...definition, rootKey: { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' } }],
    ['short modulus', { ...definition, rootKey: { kty: 'RSA', n: 'AQAB'.repeat(20), e: 'AQAB' } }],
    ['wrong alg', { ...definition, rootKey: { ...key.publicKey, alg: 'RS256' } }],
  ])('refuses %s with a message naming the problem', (_what, value) => {
    expect(codeOf(() => parseChannelDefinition(value, 'chan.json'))).toBe('invalid-definition');
    expect(() => parseChannelDefinition(value, 'chan.json')).toThrow(/^chan\.json: /);
  });
});

describe('advertised timestamps', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  it('accepts decimal seconds with an optional newline', () => {
    expect(parseAdvertisedTimestamp(enc('1700000000'))).toBe(1_700_000_000);
    expect(parseAdvertisedTimestamp(enc('1700000000\n'))).toBe(1_700_000_000);
    expect(parseAdvertisedTimestamp(enc('1700000000\r\n'))).toBe(1_700_000_000);
  });
  it.each(['', '\n', '0', ' 1700000000', '1700000000 ', '1e9', '0x10', '17000000000000'])(
    'refuses %j',
    (text) => {
      expect(codeOf(() => parseAdvertisedTimestamp(enc(text)))).toBe('invalid-timestamp');
    },
  );
});

describe('destinations', () => {
  it('classifies rule destinations', () => {
    expect(ruleDestination('https:', '^http:')).toEqual({ kind: 'same-url' });
    // "https:" after a from that matched more: https:/evil.example/ reads as https://evil.example/.
    expect(ruleDestination('https:')).toEqual({ kind: 'computed' });
    expect(ruleDestination('https:', '^http://example\\.org')).toEqual({ kind: 'computed' });
    expect(ruleDestination('https://www.example.org/')).toEqual({
      kind: 'literal',
      urls: ['https://www.example.org/'],
    });
    expect(ruleDestination('https://example.org/a$1')).toEqual({
      kind: 'literal',
      urls: ['https://example.org/a'],
    });
    // An authority not ended in `to` is continued by the rest of the URL.
    expect(ruleDestination('https://example.org')).toEqual({ kind: 'computed' });
    expect(ruleDestination('https://$1example.org/')).toEqual({ kind: 'computed' });
    // Groups that are alternations of literals are expanded, with "" when the group may not take part.
    expect(ruleDestination('https://$1example.org/', '^http://(www\\.)?example\\.org/')).toEqual({
      kind: 'literal',
      urls: ['https://example.org/', 'https://www.example.org/'],
    });
    expect(
      ruleDestination('https://www.example.$2/', '^http://(www\\.)?example\\.(com|net)/'),
    ).toEqual({
      kind: 'literal',
      urls: ['https://www.example.com/', 'https://www.example.net/'],
    });
    expect(
      ruleDestination('https://$1.example.org/', '^http://(?:(www)|cdn)\\.example\\.org/'),
    ).toEqual({
      kind: 'literal',
      urls: ['https://.example.org/', 'https://www.example.org/'],
    });
    expect(
      ruleDestination('https://$1example.org/', '^http://(www\\.){0,1}example\\.org/'),
    ).toEqual({
      kind: 'literal',
      urls: ['https://example.org/', 'https://www.example.org/'],
    });
    // A group of host-name characters before a literal domain: some subdomain of it.
    expect(
      ruleDestination('https://$1.example.org/', '^http://([\\w-]+)\\.example\\.org/'),
    ).toEqual({ kind: 'subdomain', of: 'example.org' });
    // Anything that may hold "/", "@" or ":" is only known when rewriting.
    expect(ruleDestination('https://$1.attacker.example/', '^http://([^/]+)/')).toEqual({
      kind: 'computed',
    });
  });
  it('allows the scope (also as http:), listed hosts and their subdomains when asked for', () => {
    const policy = destinationPolicy('^http://([^/]*\\.)?example\\.org/', [
      'cdn.example.net',
      '*.static.example',
    ]);
    expect(policy.allows('https://www.example.org/x')).toBe(true);
    expect(policy.allows('https://cdn.example.net/x')).toBe(true);
    expect(policy.allows('https://a.b.static.example/')).toBe(true);
    expect(policy.allows('https://static.example/')).toBe(false);
    expect(policy.allows('https://attacker.example/www.example.org/')).toBe(false);
    expect(policy.allows('https://cdn.example.net@attacker.example/')).toBe(false);
    expect(destinationPolicy('', []).allows('https://anything.example/')).toBe(true);
  });
});

describe('layout', () => {
  it('joins prefixes with exactly one slash', () => {
    expect(channelFileUrl('https://a.example/v1/', 'latest-timestamp')).toBe(
      'https://a.example/v1/latest-timestamp',
    );
    expect(channelFileUrl('https://a.example/v1', 'latest-timestamp')).toBe(
      'https://a.example/v1/latest-timestamp',
    );
  });
});

describe('signatures', () => {
  const data = new TextEncoder().encode('exact bytes');
  it('verifies a signature made with the matching private key, and only over the same bytes', async () => {
    const sig = await signBytes(key.privateKey, data);
    expect(sig.byteLength).toBe(384);
    await expect(verifySignature(key.publicKey, sig, data)).resolves.toBeUndefined();
    const changed = data.slice();
    changed[0] = (changed[0] as number) ^ 1;
    await expect(verifySignature(key.publicKey, sig, changed)).rejects.toMatchObject({
      code: 'bad-signature',
    });
    await expect(verifySignature(key.publicKey, sig.subarray(1), data)).rejects.toMatchObject({
      code: 'bad-signature',
    });
  });
  it('refuses to sign with a public key', async () => {
    await expect(signBytes(key.publicKey, data)).rejects.toMatchObject({ code: 'invalid-key' });
  });
  const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
  const nBytes = () => new Uint8Array(Buffer.from(key.publicKey.n as string, 'base64url'));

  it('refuses an exponent other than 65537, such as 1 (which lets anyone forge)', async () => {
    for (const e of ['AQ', 'Aw', 'AAEAAQ' /* 65537 with a leading zero byte is the same value */]) {
      const jwk = { kty: 'RSA', n: key.publicKey.n, e };
      if (e === 'AAEAAQ') expect(checkPublicJwk(jwk).e).toBe('AAEAAQ');
      else expect(codeOf(() => checkPublicJwk(jwk))).toBe('invalid-key');
    }
    // With e = 1, RSA "verification" is the identity: the PSS encoding of the data is its own
    // signature. Build one by hand and check that it never reaches WebCrypto.
    const weak = { kty: 'RSA', n: key.publicKey.n, e: 'AQ' };
    await expect(
      verifySignature(
        weak,
        nBytes().map(() => 1),
        data,
      ),
    ).rejects.toMatchObject({
      code: 'invalid-key',
      message: expect.stringContaining('exponent is 1'),
    });
  });

  it('counts the modulus on its value: leading zero bytes do not make a 2048-bit key long enough', async () => {
    const small = await generateSigningKeyPair(2048);
    const n = new Uint8Array(Buffer.from(small.publicKey.n as string, 'base64url'));
    const padded = new Uint8Array(384);
    padded.set(n, 384 - n.length);
    expect(b64u(padded).length).toBe(512); // as long as a 3072-bit modulus in base64
    expect(() => checkPublicJwk({ kty: 'RSA', n: b64u(padded), e: 'AQAB' })).toThrow(
      /modulus has 2048 bits; at least 3072/,
    );
    expect(() => checkPublicJwk(small.publicKey)).toThrow(/2048 bits/);
    await expect(signBytes(small.privateKey, data)).rejects.toMatchObject({ code: 'invalid-key' });
    expect(checkPublicJwk(key.publicKey).n).toBe(key.publicKey.n);
    expect(b64u(nBytes()).length).toBe(512);
  });

  it('generates 4096-bit PS256 keys by default', async () => {
    const pair = await generateSigningKeyPair();
    expect(checkPublicJwk(pair.publicKey).n?.length).toBe(683); // ceil(512 * 8 / 6)
    expect(pair.publicKey.alg).toBe('PS256');
    expect(pair.privateKey.d).toBeTypeOf('string');
  });
});

describe('gzip', () => {
  it('round-trips and refuses output above the limit or malformed input', async () => {
    const bytes = new Uint8Array(100_000).map((_, i) => i % 7);
    const gz = await gzipBytes(bytes);
    expect(gz.byteLength).toBeLessThan(bytes.byteLength);
    expect(await gunzipLimited(gz, bytes.byteLength)).toEqual(bytes);
    await expect(gunzipLimited(gz, bytes.byteLength - 1)).rejects.toMatchObject({
      code: 'too-large',
    });
    await expect(gunzipLimited(gz.subarray(0, gz.length - 4), 1e6)).rejects.toMatchObject({
      code: 'corrupt-bundle',
    });
    await expect(gunzipLimited(bytes, 1e6)).rejects.toMatchObject({ code: 'corrupt-bundle' });
  });
});

describe('schedule', () => {
  it('is due immediately when never checked, after a day otherwise, with catch-up', () => {
    expect(secondsUntilNextCheck(undefined, 1000)).toBe(0);
    expect(secondsUntilNextCheck(1000, 1000)).toBe(86400);
    expect(secondsUntilNextCheck(1000, 1000 + 86000)).toBe(400);
    expect(secondsUntilNextCheck(1000, 1000 + 5 * 86400)).toBe(0);
    // Clock went backwards: check now rather than wait for a day that may never come.
    expect(secondsUntilNextCheck(5000, 1000)).toBe(0);
  });
  it('retries a failed check after an hour', () => {
    expect(secondsUntilChannelCheck({ at: 1000, result: 'failed' }, 1000)).toBe(3600);
    expect(secondsUntilChannelCheck({ at: 1000, result: 'current' }, 1000)).toBe(86400);
    expect(secondsUntilChannelCheck(undefined, 1000)).toBe(0);
  });
});

describe('scoped rewriting', () => {
  const defaults = loadBundle(compileBundle([ruleset('Default Example', 'example.com')]));
  const channelBundle = compileBundle(
    [
      ruleset('Onion', '*.securedrop.tor.onion'),
      ruleset(
        'Channel Example',
        'example.com',
        '^http://example\\.com/',
        'https://channel.example.com/',
      ),
    ],
    { timestamp: 1_700_000_000 },
  );
  const record = (
    name: string,
    scope: string,
    replacesDefaults = false,
    timestamp = 1_700_000_000,
  ): ChannelRecord => {
    const channel = { ...parsedDefinition, name, scope, replacesDefaults };
    return {
      channel,
      installed: {
        timestamp,
        bundle: channelBundle,
        rulesetCount: 2,
        installedAt: 0,
        keyVersion: 1,
        verifiedFor: channelBinding(channel),
      },
    };
  };

  it('consults a channel only for URLs in its scope', () => {
    const engine = scopedEngineFromChannels(
      selectActiveChannels([record('Onion', definition.scope)]),
      defaults,
    );
    expect(engine.rewriteWithRuleset('http://news.securedrop.tor.onion/')).toEqual({
      rewritten: 'https://news.securedrop.tor.onion/',
      ruleset: 'Onion',
      channel: 'Onion',
    });
    // The channel also has an example.com ruleset, but example.com is outside its scope.
    expect(engine.rewriteWithRuleset('http://example.com/')).toEqual({
      rewritten: 'https://example.com/',
      ruleset: 'Default Example',
      channel: null,
    });
    expect(engine.layersFor('http://example.com/').map((l) => l.channel)).toEqual([null]);
  });

  it('does not apply a bundle verified for another definition', () => {
    const r = record('Onion', definition.scope);
    expect(selectActiveChannels([{ ...r, channel: { ...r.channel, scope: '' } }]).channels).toEqual(
      [],
    );
  });

  it('lets an in-scope channel take precedence over the defaults', () => {
    const engine = scopedEngineFromChannels(
      selectActiveChannels([record('Everything', '')]),
      defaults,
    );
    expect(engine.rewriteWithRuleset('http://example.com/')).toEqual({
      rewritten: 'https://channel.example.com/',
      ruleset: 'Channel Example',
      channel: 'Everything',
    });
  });

  it('drops a rewrite that leaves the scope, and lets the next layer decide', () => {
    const engine = scopedEngineFromChannels(
      selectActiveChannels([record('Example', '^https?://example\\.com/')]),
      defaults,
    );
    expect(engine.rewriteWithRuleset('http://example.com/')).toEqual({
      rewritten: 'https://example.com/',
      ruleset: 'Default Example',
      channel: null,
      refused: {
        channel: 'Example',
        rewritten: 'https://channel.example.com/',
        ruleset: 'Channel Example',
      },
    });
  });

  it('drops the defaults only for a replacing channel not older than them', () => {
    const replacing = selectActiveChannels(
      [record('Onion', definition.scope, true)],
      1_600_000_000,
    );
    expect(replacing.useDefaults).toBe(false);
    expect(scopedEngineFromChannels(replacing, defaults).rewrite('http://example.com/')).toBeNull();

    const stale = selectActiveChannels([record('Onion', definition.scope, true)], 1_800_000_000);
    expect(stale).toEqual({ channels: [], useDefaults: true });
    expect(scopedEngineFromChannels(stale, defaults).rewrite('http://example.com/')).toBe(
      'https://example.com/',
    );
  });

  it('reports invalid URLs instead of throwing', () => {
    const engine = new ScopedEngine([{ channel: null, scope: null, engine: defaults }]);
    expect(engine.rewriteWithRuleset('not a url')).toMatchObject({
      rewritten: null,
      channel: null,
      error: expect.any(String),
    });
  });
});
