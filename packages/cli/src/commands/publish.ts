import { mkdir, readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Command } from '../shared/commander.js';
import { compileBundle, loadBundle, readBundleHeader } from '@httpsify/engine';
import {
  bundleFileName,
  checkBundleDestinations,
  checkCertificateBinding,
  checkNotInFuture,
  DEFAULT_CHANNEL_LIMITS,
  type DeltaBase,
  deltaFiles,
  deltaIndexFileName,
  destinationPolicy,
  formatTimestamp,
  keyCertificateFileName,
  keyCertificateSignatureFileName,
  LATEST_TIMESTAMP_FILE,
  parseAdvertisedTimestamp,
  parseKeyCertificate,
  parseRelease,
  publicJwkOf,
  releaseFileName,
  releaseFiles,
  releaseSignatureFileName,
  sha256Hex,
  verifySignature,
} from '@httpsify/engine/channels';
import { rulesetsOutsideScope } from '../channels/scope-fit.js';
import { readChannelFile, readPrivateKey } from '../channels/signing-key.js';
import { writeFileAtomic } from '../channels/files.js';
import { readRegularFile } from '@httpsify/engine/node';
import { loadRulesOption } from '../shared/rules-option.js';
import { count } from '../shared/plural.js';

/** Certificates and release files are JSON of a few kilobytes. */
const SMALL_FILE_BYTES = 1024 * 1024;

/**
 * The channel's files through the one door for rulesets, bundles and channels (regular files,
 * bounded), as a promise so a failure reaches each caller's .catch.
 */
const readFile = async (path: string, maxBytes: number): Promise<Buffer> =>
  readRegularFile(path, maxBytes);

interface PublishOptions {
  rules: string;
  key: string;
  cert: string;
  channel: string;
  out: string;
  timestamp?: string;
  allowErrors?: boolean;
  deltas: string;
}

/** Deltas written by default: from the last three releases (clients that skipped a day or two). */
const DEFAULT_DELTAS = 3;

export function registerPublish(program: Command): void {
  program
    .command('publish')
    .description(
      'compile, gzip and sign rulesets into an update channel directory (serve it over HTTPS)',
    )
    .requiredOption('--rules <dir>', 'rulesets to publish: directory of *.xml, XML file or bundle')
    .requiredOption(
      '--channel <file>',
      'the channel definition (*.channel.json): its name, URL prefix, scope and destinations are signed into the release',
    )
    .requiredOption(
      '--key <file>',
      'signing key (*.signing-<n>.private.jwk from httpsify keygen or rotate-key)',
    )
    .requiredOption(
      '--cert <file>',
      'certificate of that key (*.key.<n>.json, with its .sig next to it)',
    )
    .requiredOption('--out <dir>', 'channel directory to write into (created if missing)')
    .option(
      '--timestamp <seconds>',
      'unix time of this release (default: now); must be newer than the published one',
    )
    .option('--allow-errors', 'publish even if some rulesets have errors (they are left out)')
    .option(
      '--deltas <n>',
      'write deltas from the last <n> releases in the directory (0: none)',
      String(DEFAULT_DELTAS),
    )
    .action(async (options: PublishOptions) => {
      const now = Math.floor(Date.now() / 1000);
      const timestamp =
        options.timestamp === undefined ? now : parseTimestampOption(options.timestamp);
      checkNotInFuture(timestamp, now);

      const channel = await readChannelFile(options.channel);
      const privateKey = await readPrivateKey(options.key);
      // The certificate must be one clients accept: signed by the channel's root, naming the channel, for this key.
      const certBytes = new Uint8Array(
        await readFile(options.cert, SMALL_FILE_BYTES).catch((err: NodeJS.ErrnoException) => {
          throw new Error(
            `cannot read the key certificate ${options.cert}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`,
          );
        }),
      );
      const sigPath = options.cert.replace(/\.json$/, '') + '.sig';
      const certSig = new Uint8Array(
        await readFile(sigPath, DEFAULT_CHANNEL_LIMITS.maxSignatureBytes).catch(() => {
          throw new Error(
            `${sigPath}: the certificate's signature is missing (it sits next to ${options.cert})`,
          );
        }),
      );
      try {
        await verifySignature(channel.rootKey, certSig, certBytes);
      } catch (err) {
        throw new Error(
          `${options.cert}: not signed by the root key of channel "${channel.name}" (${(err as Error).message})`,
        );
      }
      const cert = parseKeyCertificate(certBytes, options.cert);
      checkCertificateBinding(cert, channel, cert.version);
      if (cert.key.n !== privateKey.n || cert.key.e !== privateKey.e)
        throw new Error(
          `${options.key} is not the key certified by ${options.cert}; clients would reject the signature`,
        );
      if (cert.version < channel.minKeyVersion)
        throw new Error(
          `${options.cert} is key version ${cert.version}, below the channel's minKeyVersion ${channel.minKeyVersion}: clients refuse it`,
        );
      const newest = await newestKeyVersion(options.out, options.cert);
      if (newest !== undefined && cert.version < newest.version)
        throw new Error(
          `${options.cert} is key version ${cert.version}, but ${newest.where} has key version ${newest.version}: clients that have seen it refuse older keys (key-revoked). Publish with the newest signing key`,
        );
      if (timestamp < channel.minTimestamp)
        throw new Error(
          `timestamp ${timestamp} is older than the channel's minTimestamp ${channel.minTimestamp}: clients refuse it`,
        );

      const previous = await readPublishedTimestamp(options.out);
      if (previous !== undefined && timestamp <= previous) {
        throw new Error(
          `timestamp ${timestamp} (${formatTimestamp(timestamp)}) is not newer than the published ${previous} (${formatTimestamp(previous)}); clients only install strictly newer bundles`,
        );
      }

      const loaded = loadRulesOption([options.rules], { checkRegexes: true });
      const errors = loaded.diagnostics.filter((d) => d.severity === 'error').length;
      if (errors > 0 && options.allowErrors !== true)
        throw new Error(
          `${count(errors, 'ruleset error')} (listed above); fix them or pass --allow-errors to publish without the broken rulesets`,
        );
      const rulesets =
        loaded.rulesets.length > 0
          ? loaded.rulesets
          : Array.from({ length: loaded.engine.rulesetCount }, (_, id) =>
              loaded.engine.ruleset(id),
            );
      if (rulesets.length === 0) throw new Error(`${options.rules}: no rulesets to publish`);
      // A ruleset no URL of the scope can reach would ship to every client and never run.
      const outside = rulesetsOutsideScope(rulesets, channel.scope);
      if (outside.length > 0) {
        const names = outside
          .slice(0, 20)
          .map((rs) => `"${rs.name}"${rs.loc?.file !== undefined ? ` (${rs.loc.file})` : ''}`);
        throw new Error(
          `${count(outside.length, 'ruleset')} can never apply within the channel's scope ${channel.scope}: ${names.join(', ')}${outside.length > 20 ? `, and ${outside.length - 20} more` : ''}; remove them, widen the scope, or add a <test url> inside it`,
        );
      }

      const bundle = compileBundle(rulesets, { timestamp });
      if (readBundleHeader(bundle).timestamp !== timestamp)
        throw new Error('internal error: compiled bundle does not carry the release timestamp');
      // Clients refuse a release whose rules send URLs outside the scope and destinations: say so here.
      checkBundleDestinations(
        loadBundle(bundle),
        destinationPolicy(channel.scope, channel.destinations),
      );
      const gz = new Uint8Array(gzipSync(bundle, { level: 9 }));
      const limits = DEFAULT_CHANNEL_LIMITS;
      if (gz.byteLength > limits.maxCompressedBytes || bundle.byteLength > limits.maxBundleBytes) {
        throw new Error(
          `bundle too large for clients (${gz.byteLength} bytes gzipped, ${bundle.byteLength} unpacked; limits ${limits.maxCompressedBytes} and ${limits.maxBundleBytes})`,
        );
      }
      const deltaCount = parseDeltaCount(options.deltas);
      const files = {
        ...(await releaseFiles(channel, bundle, timestamp, privateKey, cert.version, gz)),
        ...(await deltaFiles(
          channel,
          await deltaBases(options.out, timestamp, deltaCount),
          bundle,
          timestamp,
          privateKey,
          cert.version,
          gz.byteLength,
        )),
      };
      // Catch a damaged key here rather than on every client.
      await verifySignature(
        publicJwkOf(privateKey),
        files[releaseSignatureFileName(timestamp)] as Uint8Array,
        files[releaseFileName(timestamp)] as Uint8Array,
      );

      await mkdir(options.out, { recursive: true });
      // The immutable files first; `latest-timestamp` last, so the channel never advertises files that are not there yet.
      await writeFileAtomic(join(options.out, keyCertificateFileName(cert.version)), certBytes);
      await writeFileAtomic(
        join(options.out, keyCertificateSignatureFileName(cert.version)),
        certSig,
      );
      for (const [name, bytes] of Object.entries(files))
        await writeFileAtomic(join(options.out, name), bytes);
      await writeFileAtomic(join(options.out, LATEST_TIMESTAMP_FILE), `${timestamp}\n`);
      const deltas = Object.keys(files).filter((name) => name.endsWith('.delta.gz'));
      process.stderr.write(
        `published ${count(rulesets.length, 'ruleset')} as ${timestamp} (${formatTimestamp(timestamp)}) in ${options.out}: ${bundleFileName(timestamp)} ${gz.byteLength} bytes, signed by key version ${cert.version}` +
          `${deltas.length > 0 ? `; ${count(deltas.length, 'delta')} (${deltas.map((d) => `${d} ${(files[d] as Uint8Array).byteLength} bytes`).join(', ')}) listed in ${deltaIndexFileName(timestamp)}` : ''}\n`,
      );
    });
}

function parseDeltaCount(value: string): number {
  if (!/^[0-9]+$/.test(value) || Number(value) > 16)
    throw new Error(`--deltas must be a whole number from 0 to 16, got ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * The newest `max` releases published in `dir` before `timestamp`, each with its bundle as its
 * release states it (a release whose bundle is missing, damaged or of an older bundle format
 * gets no delta, said on stderr). Clients rebuild the new release from them.
 */
async function deltaBases(dir: string, timestamp: number, max: number): Promise<DeltaBase[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const stamps = names
    .flatMap((n) => {
      const m = /^rulesets\.([0-9]+)\.release\.json$/.exec(n);
      return m === null ? [] : [Number(m[1])];
    })
    .filter((t) => t < timestamp)
    .sort((a, b) => b - a)
    .slice(0, max);
  const bases: DeltaBase[] = [];
  for (const ts of stamps) {
    try {
      const release = parseRelease(
        new Uint8Array(await readFile(join(dir, releaseFileName(ts)), SMALL_FILE_BYTES)),
      );
      const bundle = new Uint8Array(
        gunzipSync(
          await readFile(join(dir, bundleFileName(ts)), DEFAULT_CHANNEL_LIMITS.maxCompressedBytes),
          { maxOutputLength: release.bundle.bytes },
        ),
      );
      if (
        bundle.byteLength !== release.bundle.bytes ||
        (await sha256Hex(bundle)) !== release.bundle.sha256
      )
        throw new Error('the bundle does not match its release');
      loadBundle(bundle);
      bases.push({ timestamp: ts, bundle });
    } catch (err) {
      process.stderr.write(`httpsify: no delta from release ${ts}: ${(err as Error).message}\n`);
    }
  }
  return bases;
}

function parseTimestampOption(value: string): number {
  if (!/^[0-9]+$/.test(value))
    throw new Error(`--timestamp must be unix seconds, got ${JSON.stringify(value)}`);
  return parseAdvertisedTimestamp(new TextEncoder().encode(value));
}

/** The timestamp the channel directory advertises now, if any. */
async function readPublishedTimestamp(dir: string): Promise<number | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(
      join(dir, LATEST_TIMESTAMP_FILE),
      DEFAULT_CHANNEL_LIMITS.maxTimestampBytes,
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(
      `${join(dir, LATEST_TIMESTAMP_FILE)}: ${(err as Error).message}; fix or remove it before publishing`,
    );
  }
  try {
    return parseAdvertisedTimestamp(bytes);
  } catch (err) {
    throw new Error(
      `${join(dir, LATEST_TIMESTAMP_FILE)}: ${(err as Error).message}; fix or remove it before publishing`,
    );
  }
}

/**
 * The newest key version this channel has: certificates published in the channel directory,
 * and those `rotate-key` wrote next to the given certificate. Clients that have seen a key
 * refuse every older one, so a release signed by one would reach nobody.
 */
async function newestKeyVersion(
  outDir: string,
  certPath: string,
): Promise<{ version: number; where: string } | undefined> {
  const versions = async (dir: string, prefix: string): Promise<number[]> => {
    const names = await readdir(dir).catch(() => [] as string[]);
    return names.flatMap((n) => {
      const m = /^(.*?)key\.([0-9]+)\.json$/.exec(n);
      return m === null || m[1] !== prefix ? [] : [Number(m[2])];
    });
  };
  const certName = /^(.*?)key\.[0-9]+\.json$/.exec(basename(certPath));
  const candidates = [
    { versions: await versions(outDir, ''), where: `the channel directory ${outDir}` },
    {
      versions: certName === null ? [] : await versions(dirname(certPath), certName[1] as string),
      where: `${dirname(certPath)} (httpsify rotate-key)`,
    },
  ];
  let newest: { version: number; where: string } | undefined;
  for (const c of candidates)
    for (const v of c.versions)
      if (newest === undefined || v > newest.version) newest = { version: v, where: c.where };
  return newest;
}
