import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

const BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The text of a `--ca` file, once it is known to hold PEM certificates that parse. Node's TLS
 * skips what it cannot read in `ca`, so a DER file, a key or a typo would otherwise leave the
 * run trusting nothing extra without a word, and every TLS failure would look like the site's.
 */
export function readCaFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`--ca ${file}: cannot read: ${(err as Error).message}`);
  }
  const blocks = text.match(BLOCK) ?? [];
  if (blocks.length === 0)
    throw new Error(
      `--ca ${file}: no PEM certificate in it (expected "-----BEGIN CERTIFICATE-----" blocks; convert DER with openssl x509 -inform der)`,
    );
  blocks.forEach((pem, i) => {
    try {
      new X509Certificate(pem);
    } catch (err) {
      throw new Error(
        `--ca ${file}: certificate ${i + 1} does not parse: ${(err as Error).message}`,
      );
    }
  });
  return text;
}
