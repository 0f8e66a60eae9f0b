import type { Command } from '../shared/commander.js';
import {
  generateSigningKeyPair,
  keyCertificateFileName,
  keyCertificateFiles,
  keyCertificateSignatureFileName,
  publicJwkOf,
} from '@httpsify/engine/channels';
import { writeNewFile } from '../channels/files.js';
import { readChannelFile, readPrivateKey } from '../channels/signing-key.js';
import { keyFiles, refuseExisting, wholeNumber } from './keygen.js';
import { checkOutputPath } from '../shared/output-file.js';

interface RotateOptions {
  root: string;
  channel: string;
  keyVersion: string;
  out: string;
}

export function registerRotateKey(program: Command): void {
  program
    .command('rotate-key')
    .description(
      'make a new signing key for a channel, certified by its root key; clients that see it stop trusting older keys',
    )
    .requiredOption('--root <file>', 'the channel root key (*.root.private.jwk)')
    .requiredOption('--channel <file>', 'the channel definition (*.channel.json)')
    .requiredOption('--key-version <n>', 'version of the new key: higher than every key before it')
    .requiredOption(
      '--out <prefix>',
      'prefix of the files written (<prefix>.signing-<n>.private.jwk, <prefix>.key.<n>.json/.sig)',
    )
    .action(async (options: RotateOptions) => {
      const version = wholeNumber(options.keyVersion, '--key-version', 2, 1_000_000);
      const channel = await readChannelFile(options.channel);
      const root = await readPrivateKey(options.root);
      const rootPublic = publicJwkOf(root);
      if (rootPublic.n !== channel.rootKey.n || rootPublic.e !== channel.rootKey.e)
        throw new Error(
          `${options.root} is not the root key of channel "${channel.name}" (${options.channel})`,
        );
      const files = keyFiles(options.out, version);
      checkOutputPath(files.signingPrivate, `--out ${options.out}`);
      await refuseExisting([files.signingPrivate, files.certificate, files.certificateSignature]);
      const signing = await generateSigningKeyPair();
      const cert = await keyCertificateFiles(channel, root, signing.publicKey, version);
      await writeNewFile(
        files.signingPrivate,
        `${JSON.stringify(signing.privateKey, null, 2)}\n`,
        0o600,
      );
      await writeNewFile(
        files.certificate,
        cert[keyCertificateFileName(version)] as Uint8Array,
        0o644,
      );
      await writeNewFile(
        files.certificateSignature,
        cert[keyCertificateSignatureFileName(version)] as Uint8Array,
        0o644,
      );
      process.stderr.write(
        `wrote ${files.signingPrivate} (mode 600) and ${files.certificate} (+ .sig), key version ${version}. Publish with them; clients that install a release signed by it refuse keys below version ${version}. To revoke older keys at once, also raise "minKeyVersion" in the definition.\n`,
      );
    });
}
