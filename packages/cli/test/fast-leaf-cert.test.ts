import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { issueLeaf, pem } from './support/fast-leaf-cert.js';

// DER of the Name "CN=Test CA".
const ISSUER = Buffer.from('30123110300e06035504030c0754657374204341', 'hex');

describe('the local web certificate writer', () => {
  it('writes PEM without a blank line when the body fills its last line exactly', () => {
    const text = pem('CERTIFICATE', new Uint8Array(96)); // 128 base64 characters: two full lines
    expect(text).not.toContain('\n\n');
    expect(text.split('\n')).toHaveLength(5);
  });

  it('issues certificates that OpenSSL loads, whatever their length', () => {
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const spki = keys.publicKey.export({ type: 'spki', format: 'der' });
    const lengths = new Set<number>();
    // A name adds two bytes per character (subject and SAN), and serials from 256 on take one
    // byte more: together they reach every DER length modulo 48, the base64 line size. The
    // ECDSA signature's length varies too, so where DER lengths jump a length can be missed in
    // one pass: passes repeat (new signatures) until the full-line case has been issued.
    for (let i = 0; i < 96 || (!lengths.has(0) && i < 96 * 10); i++) {
      const name = `${'a'.repeat(1 + ((i >> 1) % 48))}.test`;
      const cert = issueLeaf({
        serial: i % 2 === 0 ? 1 : 256,
        name,
        notBefore: new Date(Date.UTC(2026, 0, 1)),
        notAfter: new Date(Date.UTC(2027, 0, 1)),
        issuerName: ISSUER,
        publicKey: spki,
        signingKey: keys.privateKey,
      });
      const parsed = new X509Certificate(cert);
      lengths.add(parsed.raw.length % 48);
      expect(parsed.subjectAltName).toBe(`DNS:${name}`);
      expect(() =>
        createSecureContext({
          cert,
          key: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }),
        }),
      ).not.toThrow();
    }
    expect(lengths.has(0)).toBe(true);
  });
});
