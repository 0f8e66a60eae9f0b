export { defaultRulesetsDir, defaultRulesetsTimestamp, isBundle, listRulesetFiles, loadRulesets, type LoadedRulesets, type LoadOptions } from './load-rulesets.js';
export { channelStateDir, defaultStateDir, fileChannelStorage, loadInstalledChannels, readChannelRecords, removeChannelState, type ChannelRecordsOnDisk } from './channel-store.js';
export { writeFileAtomic } from './write-file-atomic.js';
