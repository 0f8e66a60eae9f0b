import { access } from 'node:fs/promises';
import type { Command } from '../shared/commander.js';
import {
  channelDefinitionJson,
  GENERATED_MODULUS_BITS,
  generateSigningKeyPair,
  keyCertificateFileName,
  keyCertificateFiles,
  keyCertificateSignatureFileName,
  MAX_AGE_DAYS_LIMIT,
  parseChannelDefinition,
} from '@httpsify/engine/channels';
import { writeNewFile } from '../channels/files.js';
import { collect } from '../shared/rules-option.js';
import { checkOutputPath } from '../shared/output-file.js';

interface KeygenOptions {
  out: string;
  name: string;
  urlPrefix: string;
  scope: string;
  destination?: string[];
  maxAgeDays: string;
  minTimestamp?: string;
  replacesDefaults?: boolean;
}

/** Names of the files `keygen` and `rotate-key` write for an output prefix. */
export const keyFiles = (out: string, version: number) => ({
  rootPrivate: `${out}.root.private.jwk`,
  rootPublic: `${out}.root.public.jwk`,
  signingPrivate: `${out}.signing-${version}.private.jwk`,
  certificate: `${out}.key.${version}.json`,
  certificateSignature: `${out}.key.${version}.sig`,
  channel: `${out}.channel.json`,
});

export async function refuseExisting(files: string[]): Promise<void> {
  // Check every target first so a refusal leaves nothing half-written.
  for (const file of files) {
    if (
      await access(file).then(
        () => true,
        () => false,
      )
    )
      throw new Error(`${file} already exists; refusing to overwrite a key (choose another --out)`);
  }
}

export function registerKeygen(program: Command): void {
  program
    .command('keygen')
    .description(
      `make the keys of a new update channel (RSA-PSS ${GENERATED_MODULUS_BITS}-bit / SHA-256) and its definition for clients`,
    )
    .option('--out <prefix>', 'prefix of the files written', 'channel')
    .requiredOption('--name <name>', 'channel name (signed into every release)')
    .requiredOption('--url-prefix <url>', 'https: URL the channel directory will be served under')
    .requiredOption(
      '--scope <regex>',
      'URLs the channel may rewrite, e.g. \'^https?://([^/]*\\.)?example\\.org[:/]\' ("" allows every URL: only for a channel meant to cover the whole web)',
    )
    .option(
      '--destination <host>',
      'a host outside the scope that rules may send URLs to (repeatable; *.host for its subdomains)',
      collect,
    )
    .option(
      '--max-age-days <days>',
      'clients show the channel as stale when its newest release is older than this',
      '14',
    )
    .option(
      '--min-timestamp <seconds>',
      'clients never install a release older than this (default: now)',
    )
    .option('--replaces-defaults', 'its rulesets replace the built-in ones')
    .action(async (options: KeygenOptions) => {
      const files = keyFiles(options.out, 1);
      const maxAgeDays = wholeNumber(options.maxAgeDays, '--max-age-days', 1, MAX_AGE_DAYS_LIMIT);
      const now = Math.floor(Date.now() / 1000);
      const minTimestamp =
        options.minTimestamp === undefined
          ? now
          : wholeNumber(options.minTimestamp, '--min-timestamp', 0, now);
      checkOutputPath(files.rootPrivate, `--out ${options.out}`);
      await refuseExisting(Object.values(files));

      const [root, signing] = await Promise.all([
        generateSigningKeyPair(),
        generateSigningKeyPair(),
      ]);
      const channel = parseChannelDefinition(
        channelDefinitionJson({
          name: options.name,
          urlPrefix: options.urlPrefix,
          rootKey: root.publicKey,
          scope: options.scope,
          destinations: options.destination ?? [],
          minTimestamp,
          maxAgeDays,
          minKeyVersion: 1,
          replacesDefaults: options.replacesDefaults === true,
        }),
        'channel definition',
      );
      const cert = await keyCertificateFiles(channel, root.privateKey, signing.publicKey, 1);
      await writeNewFile(files.rootPrivate, `${JSON.stringify(root.privateKey, null, 2)}\n`, 0o600);
      await writeNewFile(files.rootPublic, `${JSON.stringify(root.publicKey, null, 2)}\n`, 0o644);
      await writeNewFile(
        files.signingPrivate,
        `${JSON.stringify(signing.privateKey, null, 2)}\n`,
        0o600,
      );
      await writeNewFile(files.certificate, cert[keyCertificateFileName(1)] as Uint8Array, 0o644);
      await writeNewFile(
        files.certificateSignature,
        cert[keyCertificateSignatureFileName(1)] as Uint8Array,
        0o644,
      );
      await writeNewFile(
        files.channel,
        `${JSON.stringify({ ...channelDefinitionJson(channel), rootKey: root.publicKey }, null, 2)}\n`,
        0o644,
      );
      process.stderr.write(
        [
          `wrote ${files.rootPrivate}: the root key (mode 600). Keep it offline: it only certifies signing keys (httpsify rotate-key).`,
          `wrote ${files.signingPrivate} (mode 600) and its certificate ${files.certificate} (+ .sig): publish with them.`,
          `wrote ${files.channel}: give it to clients (httpsify update --channel ${files.channel}).`,
          ...(options.scope === ''
            ? ['warning: the scope "" lets this channel rewrite every URL on the web']
            : []),
        ].join('\n') + '\n',
      );
    });
}

export function wholeNumber(value: string, option: string, min: number, max: number): number {
  const n = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new Error(
      `${option} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  return n;
}
