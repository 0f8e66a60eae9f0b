// `@httpsify/engine/authoring`: what ruleset authors' tools need (`httpsify check` and `test`,
// the extension's rule editor): lint findings, offline test coverage, public suffixes.
export * from '../lint/index.js';
export * from '../coverage/index.js';
export {
  PSL_SNAPSHOT,
  publicSuffix,
  registrableDomain,
  bareSuffixSection,
  type PublicSuffixMatch,
  type SuffixSection,
} from '../psl/public-suffix.js';
