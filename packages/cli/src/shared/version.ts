import { createRequire } from 'node:module';

/** The version of @httpsify/cli, from its package.json (one level above src/ and dist/ alike). */
export function cliVersion(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}
