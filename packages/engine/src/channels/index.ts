// Signed ruleset update channels: browser-safe (WebCrypto, fetch, DecompressionStream only).
export {
  CHANNEL_FORMAT,
  channelBinding,
  type ChannelDefinition,
  channelDefinitionJson,
  MAX_AGE_DAYS_LIMIT,
  parseChannelDefinition,
} from './definition.js';
export {
  checkBundleDestinations,
  type DestinationPolicy,
  destinationPolicy,
  parseDestinationHost,
  type RuleDestination,
  ruleDestination,
  compiledDestination,
} from './destinations.js';
export { type DestinationReading, readDestination } from './destination-reading.js';
export { ChannelError, type ChannelErrorCode, describeError } from './errors.js';
export { type FetchBytes, type FetchLike, fetchBytesWith } from './fetch-bytes.js';
export {
  type ChannelFreshness,
  channelFreshness,
  installedProblem,
  requiredKeyVersion,
  usableInstalled,
} from './freshness.js';
export { gunzipLimited, gzipBytes } from './gzip.js';
export { type ActiveChannels, type InstalledChannel, selectActiveChannels } from './installed.js';
export {
  bundleFileName,
  channelFileUrl,
  deltaFileName,
  deltaIndexFileName,
  deltaIndexSignatureFileName,
  keyCertificateFileName,
  keyCertificateSignatureFileName,
  LATEST_TIMESTAMP_FILE,
  releaseFileName,
  releaseSignatureFileName,
} from './layout.js';
export { type ChannelLimits, DEFAULT_CHANNEL_LIMITS } from './limits.js';
export {
  checkCertificateBinding,
  checkReleaseBinding,
  type DeltaEntry,
  type DeltaIndex,
  deltaIndexBytes,
  type KeyCertificate,
  keyCertificateBytes,
  parseDeltaIndex,
  parseKeyCertificate,
  parseRelease,
  type Release,
  releaseBytes,
  sha256Hex,
} from './release.js';
export {
  CHECK_PERIOD_SECONDS,
  RETRY_AFTER_FAILURE_SECONDS,
  secondsUntilChannelCheck,
  secondsUntilNextCheck,
} from './schedule.js';
export {
  channelLayer,
  compileScope,
  ScopedEngine,
  type ScopedLayer,
  type ScopedRewriteOutcome,
  type ScopeMatcher,
  scopedEngineFromChannels,
} from './scoped-engine.js';
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
export { raiseFloor, rootFloor, rootKeyId } from './root-floor.js';
export type {
  ChannelRecord,
  ChannelStorage,
  CheckResult,
  InstalledBundle,
  LastCheck,
  RootFloor,
  SigningKeyRecord,
} from './state.js';
export {
  checkNotInFuture,
  formatTimestamp,
  MAX_CHANNEL_TIMESTAMP,
  parseAdvertisedTimestamp,
} from './timestamp.js';
export {
  type ChannelCheckOptions,
  type ChannelCheckReport,
  checkChannel,
  fetchVerifiedBundle,
} from './update.js';
export {
  type ChannelFiles,
  type DeltaBase,
  deltaFiles,
  keyCertificateFiles,
  releaseFiles,
} from './publish.js';
export { applyDelta, DELTA_FORMAT, makeDelta } from './delta.js';
