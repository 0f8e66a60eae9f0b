import { type ChannelDefinition, parseChannelDefinition } from '@httpsify/engine/channels';
import { readJsonFile } from './files.js';

/** Reads a private signing JWK as written by `httpsify keygen`, with errors a publisher can act on. */
export async function readPrivateKey(path: string): Promise<JsonWebKey> {
  const value = await readJsonFile(path, 'signing key');
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${path}: signing key must be a JWK object`);
  const jwk = value as JsonWebKey;
  if (jwk.kty !== 'RSA')
    throw new Error(`${path}: signing key must be an RSA JWK from \`httpsify keygen\` (kty "RSA")`);
  if (typeof jwk.d !== 'string')
    throw new Error(`${path}: this is a public key; publish needs the private key (*.private.jwk)`);
  return jwk;
}

export async function readChannelFile(path: string): Promise<ChannelDefinition> {
  return parseChannelDefinition(await readJsonFile(path, 'channel definition'), path);
}
