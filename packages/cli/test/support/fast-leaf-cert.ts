import { sign, type KeyObject } from 'node:crypto';

/*
 * Leaf certificates in DER, encoded by hand: issuing one is a few buffer copies and one native
 * ECDSA signature (well under a millisecond), where the general X.509 library takes ~100 ms on a
 * loaded machine. The local web issues one per SNI name, thousands per bench run.
 */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, ...content: Buffer[]): Buffer => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const seq = (...c: Buffer[]): Buffer => tlv(0x30, ...c);
const oid = (hex: string): Buffer => tlv(0x06, Buffer.from(hex, 'hex'));
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
const ia5 = (s: string): Buffer => Buffer.from(s, 'ascii');

const ECDSA_SHA256 = seq(oid('2a8648ce3d040302'));
const CN = oid('550403');

function utcTime(d: Date): Buffer {
  const p = (n: number): string => String(n).padStart(2, '0');
  const s = `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  return tlv(0x17, Buffer.from(s, 'ascii'));
}

function serial(n: number): Buffer {
  const hex = n.toString(16);
  let bytes = Buffer.from(hex.length % 2 === 1 ? `0${hex}` : hex, 'hex');
  if ((bytes[0] ?? 0) & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(0x02, bytes);
}

export interface LeafRequest {
  serial: number;
  /** The DNS name in the subject and the subjectAltName. */
  name: string;
  notBefore: Date;
  notAfter: Date;
  /** DER of the issuer's subject Name (byte-exact, for chain building). */
  issuerName: Buffer;
  /** DER SubjectPublicKeyInfo of the leaf key. */
  publicKey: Buffer;
  /** The issuer's EC P-256 private key. */
  signingKey: KeyObject;
}

/**
 * PEM armour: base64 in 64-character lines. The lines are split, not suffixed with a newline,
 * because a body whose length is a multiple of 64 would then end in a blank line, which
 * OpenSSL refuses; ECDSA signatures vary in length, so that happened to one certificate in
 * several, at random.
 */
export function pem(label: string, der: Uint8Array): string {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** A v3 serverAuth certificate for one DNS name, as PEM. */
export function issueLeaf(r: LeafRequest): string {
  const subject = seq(tlv(0x31, seq(CN, utf8(r.name))));
  const basicConstraints = seq(oid('551d13'), tlv(0x04, seq()));
  const eku = seq(oid('551d25'), tlv(0x04, seq(oid('2b06010505070301'))));
  const san = seq(oid('551d11'), tlv(0x04, seq(tlv(0x82, ia5(r.name)))));
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    serial(r.serial),
    ECDSA_SHA256,
    r.issuerName,
    seq(utcTime(r.notBefore), utcTime(r.notAfter)),
    subject,
    r.publicKey,
    tlv(0xa3, seq(basicConstraints, eku, san)),
  );
  const signature = sign('sha256', tbs, { key: r.signingKey, dsaEncoding: 'der' });
  const cert = seq(tbs, ECDSA_SHA256, tlv(0x03, Buffer.from([0]), signature));
  return pem('CERTIFICATE', cert);
}
