// The linter alone, for loadUserRuleChecks to import on first need: a named import lets the
// bundler leave out what else `@httpsify/engine/authoring` holds (fixes, coverage), which a
// dynamic import of the whole entry would keep.
export { lintRulesetSource } from '@httpsify/engine/authoring';
