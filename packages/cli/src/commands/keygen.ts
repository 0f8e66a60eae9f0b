import { access } from 'node:fs/promises';
import type { Command } from 'commander';
import { GENERATED_MODULUS_BITS, generateSigningKeyPair, parseChannelDefinition } from '@httpsify/engine/channels';
import { writeNewFile } from '../channels/files.js';

interface KeygenOptions {
  out: string;
  name?: string;
  urlPrefix?: string;
  scope: string;
  replacesDefaults?: boolean;
}

export function registerKeygen(program: Command): void {
  program
    .command('keygen')
    .description(`make an RSA-PSS ${GENERATED_MODULUS_BITS}-bit / SHA-256 key pair for signing an update channel`)
    .option('--out <prefix>', 'writes <prefix>.private.jwk (keep secret) and <prefix>.public.jwk', 'channel-key')
    .option('--name <name>', 'also write <prefix>.channel.json, a channel definition with this name (needs --url-prefix)')
    .option('--url-prefix <url>', 'https: URL the channel directory will be served under')
    .option('--scope <regex>', 'for the channel definition: URLs its rulesets may rewrite ("" = all)', '')
    .option('--replaces-defaults', 'for the channel definition: its rulesets replace the built-in ones')
    .action(async (options: KeygenOptions) => {
      const files = { private: `${options.out}.private.jwk`, public: `${options.out}.public.jwk`, channel: `${options.out}.channel.json` };
      const wantChannel = options.name !== undefined || options.urlPrefix !== undefined;
      if (wantChannel && (options.name === undefined || options.urlPrefix === undefined)) {
        throw new Error('--name and --url-prefix go together: both are needed to write a channel definition');
      }
      // Check every target first so a refusal leaves nothing half-written.
      const targets = wantChannel ? [files.private, files.public, files.channel] : [files.private, files.public];
      for (const file of targets) {
        if (await access(file).then(() => true, () => false)) throw new Error(`${file} already exists; refusing to overwrite a key (choose another --out)`);
      }

      const pair = await generateSigningKeyPair();
      const channel = wantChannel
        ? parseChannelDefinition(
            { name: options.name, urlPrefix: options.urlPrefix, publicKey: pair.publicKey, scope: options.scope, replacesDefaults: options.replacesDefaults === true },
            'channel definition',
          )
        : undefined;
      await writeNewFile(files.private, `${JSON.stringify(pair.privateKey, null, 2)}\n`, 0o600);
      await writeNewFile(files.public, `${JSON.stringify(pair.publicKey, null, 2)}\n`, 0o644);
      process.stderr.write(`wrote ${files.private} (private signing key, mode 600: keep it offline) and ${files.public}\n`);
      if (channel) {
        await writeNewFile(files.channel, `${JSON.stringify({ ...channel, publicKey: pair.publicKey }, null, 2)}\n`, 0o644);
        process.stderr.write(`wrote ${files.channel}: give it to clients (httpsify update --channel ${files.channel})\n`);
      }
    });
}
