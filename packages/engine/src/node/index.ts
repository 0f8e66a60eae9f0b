export {
  defaultRulesetsDir,
  defaultRulesetsTimestamp,
  isBundle,
  isRulesetDirectory,
  listRulesetFiles,
  loadRulesets,
  type LoadedRulesets,
  type LoadOptions,
  type LoadProgress,
} from './load-rulesets.js';
export {
  channelStateDir,
  defaultStateDir,
  fileChannelStorage,
  loadInstalledChannels,
  readChannelRecords,
  removeChannelLeftovers,
  removeChannelState,
  type ChannelRecordsOnDisk,
} from './channel-store.js';
export {
  loadPrebuiltDefaults,
  writeDefaultBundle,
  type DefaultsLocation,
} from './default-bundle.js';
export { type StateLockOptions, withStateLock } from './state-lock.js';
export { writeFileAtomic } from './write-file-atomic.js';
export { FileRefused, FileTooLarge, openRegularFile, readRegularFile } from './read-file.js';
