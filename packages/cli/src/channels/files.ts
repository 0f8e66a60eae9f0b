import { open } from 'node:fs/promises';
import { decodeUtf8 } from '@httpsify/engine/library';
import { readRegularFile } from '@httpsify/engine/node';
import { outputFileError } from '../shared/output-file.js';

/** Reads and parses a JSON file; errors name the file and what it was supposed to hold. */
export async function readJsonFile(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    // Channel definitions and keys are kilobytes; read through the door for channel files.
    text = decodeUtf8(readRegularFile(path, 1024 * 1024));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(
      `cannot read ${what} ${path}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`${path}: ${what} is not valid JSON (${(err as Error).message})`);
  }
}

export { writeFileAtomic } from '@httpsify/engine/node';

/** Creates a new file, refusing to replace an existing one (keys must never be overwritten). */
export async function writeNewFile(
  path: string,
  data: string | Uint8Array,
  mode: number,
): Promise<void> {
  const handle = await open(path, 'wx', mode).catch((err: unknown) => {
    throw outputFileError(path, err);
  });
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
