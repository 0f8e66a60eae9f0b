import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Command } from 'commander';
import {
  bundleFileName,
  checkNotInFuture,
  compileBundle,
  DEFAULT_CHANNEL_LIMITS,
  formatTimestamp,
  LATEST_TIMESTAMP_FILE,
  parseAdvertisedTimestamp,
  publicJwkOf,
  readBundleHeader,
  signatureFileName,
  signBytes,
  verifySignature,
} from '@httpsify/engine';
import { readChannelFile, readPrivateKey } from '../channels/signing-key.js';
import { writeFileAtomic } from '../channels/files.js';
import { loadRulesOption } from '../shared/rules-option.js';

interface PublishOptions {
  rules: string;
  key: string;
  out: string;
  timestamp?: string;
  channel?: string;
  allowErrors?: boolean;
}

export function registerPublish(program: Command): void {
  program
    .command('publish')
    .description('compile, gzip and sign rulesets into an update channel directory (serve it over HTTPS)')
    .requiredOption('--rules <dir>', 'rulesets to publish: directory of *.xml, XML file or bundle')
    .requiredOption('--key <file>', 'private signing key (*.private.jwk from httpsify keygen)')
    .requiredOption('--out <dir>', 'channel directory to write into (created if missing)')
    .option('--timestamp <seconds>', 'unix time of this release (default: now); must be newer than the published one')
    .option('--channel <file>', 'channel definition to check the key against before publishing')
    .option('--allow-errors', 'publish even if some rulesets have errors (they are left out)')
    .action(async (options: PublishOptions) => {
      const now = Math.floor(Date.now() / 1000);
      const timestamp = options.timestamp === undefined ? now : parseTimestampOption(options.timestamp);
      checkNotInFuture(timestamp, now);

      const privateKey = await readPrivateKey(options.key);
      if (options.channel !== undefined) {
        const channel = await readChannelFile(options.channel);
        if (channel.publicKey.n !== privateKey.n || channel.publicKey.e !== privateKey.e) {
          throw new Error(`${options.key} is not the key of channel "${channel.name}" (${options.channel}); clients would reject the signature`);
        }
      }

      const previous = await readPublishedTimestamp(options.out);
      if (previous !== undefined && timestamp <= previous) {
        throw new Error(
          `timestamp ${timestamp} (${formatTimestamp(timestamp)}) is not newer than the published ${previous} (${formatTimestamp(previous)}); clients only install strictly newer bundles`,
        );
      }

      const loaded = loadRulesOption([options.rules], { checkRegexes: true });
      const errors = loaded.diagnostics.filter((d) => d.severity === 'error').length;
      if (errors > 0 && options.allowErrors !== true) throw new Error(`${errors} ruleset error(s) (listed above); fix them or pass --allow-errors to publish without the broken rulesets`);
      const rulesets = loaded.rulesets.length > 0 ? loaded.rulesets : Array.from({ length: loaded.engine.rulesetCount }, (_, id) => loaded.engine.ruleset(id));
      if (rulesets.length === 0) throw new Error(`${options.rules}: no rulesets to publish`);

      const bundle = compileBundle(rulesets, { timestamp });
      if (readBundleHeader(bundle).timestamp !== timestamp) throw new Error('internal error: compiled bundle does not carry the release timestamp');
      const gz = new Uint8Array(gzipSync(bundle, { level: 9 }));
      const limits = DEFAULT_CHANNEL_LIMITS;
      if (gz.byteLength > limits.maxCompressedBytes || bundle.byteLength > limits.maxBundleBytes) {
        throw new Error(`bundle too large for clients (${gz.byteLength} bytes gzipped, ${bundle.byteLength} unpacked; limits ${limits.maxCompressedBytes} and ${limits.maxBundleBytes})`);
      }
      const signature = await signBytes(privateKey, gz);
      // Catch a damaged key here rather than on every client.
      await verifySignature(publicJwkOf(privateKey), signature, gz);

      await mkdir(options.out, { recursive: true });
      // The immutable files first; `latest-timestamp` last, so the channel never advertises files that are not there yet.
      await writeFileAtomic(join(options.out, bundleFileName(timestamp)), gz);
      await writeFileAtomic(join(options.out, signatureFileName(timestamp)), signature);
      await writeFileAtomic(join(options.out, LATEST_TIMESTAMP_FILE), `${timestamp}\n`);
      process.stderr.write(
        `published ${rulesets.length} rulesets as ${timestamp} (${formatTimestamp(timestamp)}) in ${options.out}: ${bundleFileName(timestamp)} ${gz.byteLength} bytes, ${signatureFileName(timestamp)}\n`,
      );
    });
}

function parseTimestampOption(value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new Error(`--timestamp must be unix seconds, got ${JSON.stringify(value)}`);
  return parseAdvertisedTimestamp(new TextEncoder().encode(value));
}

/** The timestamp the channel directory advertises now, if any. */
async function readPublishedTimestamp(dir: string): Promise<number | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(join(dir, LATEST_TIMESTAMP_FILE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return parseAdvertisedTimestamp(bytes);
  } catch (err) {
    throw new Error(`${join(dir, LATEST_TIMESTAMP_FILE)}: ${(err as Error).message}; fix or remove it before publishing`);
  }
}
