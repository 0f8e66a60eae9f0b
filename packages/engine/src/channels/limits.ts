/** Size limits for everything a channel check downloads or inflates. */
export interface ChannelLimits {
  /** `latest-timestamp`: ten digits and a newline, with room for `\r\n`. */
  maxTimestampBytes: number;
  /** A signature is as long as the RSA modulus; 1 KiB allows keys up to 8192 bits. */
  maxSignatureBytes: number;
  /** `rulesets.<ts>.bundle.gz` as downloaded. */
  maxCompressedBytes: number;
  /** The bundle after gunzip (guards against decompression bombs). */
  maxBundleBytes: number;
}

/** The full 2018 EFF ruleset set compiles to a few MiB; these leave ample room. */
export const DEFAULT_CHANNEL_LIMITS: ChannelLimits = {
  maxTimestampBytes: 16,
  maxSignatureBytes: 1024,
  maxCompressedBytes: 32 * 1024 * 1024,
  maxBundleBytes: 128 * 1024 * 1024,
};
