// Signed ruleset update channels: browser-safe (WebCrypto, fetch, DecompressionStream only).
export { type ChannelDefinition, parseChannelDefinition } from './definition.js';
export { ChannelError, type ChannelErrorCode, describeError } from './errors.js';
export { type FetchBytes, type FetchLike, fetchBytesWith } from './fetch-bytes.js';
export { gunzipLimited, gzipBytes } from './gzip.js';
export { type ActiveChannels, type InstalledChannel, selectActiveChannels } from './installed.js';
export { bundleFileName, channelFileUrl, LATEST_TIMESTAMP_FILE, signatureFileName } from './layout.js';
export { type ChannelLimits, DEFAULT_CHANNEL_LIMITS } from './limits.js';
export { CHECK_PERIOD_SECONDS, RETRY_AFTER_FAILURE_SECONDS, secondsUntilChannelCheck, secondsUntilNextCheck } from './schedule.js';
export { compileScope, ScopedEngine, type ScopedLayer, type ScopedRewriteOutcome, scopedEngineFromChannels } from './scoped-engine.js';
export {
  checkPublicJwk,
  GENERATED_MODULUS_BITS,
  generateSigningKeyPair,
  importVerifyKey,
  MIN_MODULUS_BITS,
  publicJwkOf,
  SIGNATURE_ALGORITHM,
  type SigningKeyPair,
  signBytes,
  verifySignature,
} from './signature.js';
export type { ChannelRecord, ChannelStorage, CheckResult, InstalledBundle, LastCheck } from './state.js';
export { checkNotInFuture, formatTimestamp, MAX_CHANNEL_TIMESTAMP, parseAdvertisedTimestamp } from './timestamp.js';
export { type ChannelCheckOptions, type ChannelCheckReport, checkChannel, fetchVerifiedBundle } from './update.js';
