// Compiles the bundled default rulesets into dist/defaults (see src/node/default-bundle.ts), so
// that the CLI's one-shot calls read a bundle instead of parsing and compiling XML.
import { writeDefaultBundle } from '../dist/node/index.js';

writeDefaultBundle();
