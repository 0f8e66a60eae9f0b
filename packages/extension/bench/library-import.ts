/**
 * Importing the 2018 corpus through the options page as a person does (the benches that measure
 * an extension with a library: extension-memory.ts, navigation.ts). The page shows what the
 * library changes and waits for a choice: the bench takes all of it, as "Import" does.
 */
import { corpusTarball } from '../../engine/test/support/corpus.js';
import type { LoadedExtension } from '../test/support/browser.js';
import type { FirefoxTab } from '../test/support/firefox.js';

const IMPORT_TIMEOUT_MS = 900_000;

/** The archive a bench's server sends at `/library.tar.gz` (Firefox's page fetches it). */
export { corpusTarball };

/**
 * The import's end as the options page says it. The page shows what the library changes and
 * waits for a choice: the bench takes all of it, as "Import" does.
 */
const STATUS_EXPRESSION = `(() => {
  const preview = document.querySelector('#library-preview');
  if (preview && !preview.hidden) {
    document.querySelector('#library-apply').click();
    return '';
  }
  const error = document.querySelector('#library-error');
  if (error && !error.hidden && error.textContent) return 'error: ' + error.textContent;
  const status = document.querySelector('#library-status')?.textContent ?? '';
  return /^Imported/.test(status) ? status : '';
})()`;

export async function poll<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined && done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Waits for the options page to say the import ended (imported, or why not), and how long it took. */
async function importEnd(
  started: number,
  status: () => Promise<string>,
): Promise<{ importStatus: string; importSeconds: number }> {
  const importStatus = await poll('the import', status, (s) => s !== '', IMPORT_TIMEOUT_MS);
  return { importStatus, importSeconds: (Date.now() - started) / 1000 };
}

/** Chooses the corpus archive on a new options page of `ext`; closes the page after. */
export async function importLibraryInChromium(
  ext: LoadedExtension,
): Promise<{ importStatus: string; importSeconds: number }> {
  const options = await ext.context.newPage();
  await options.goto(`chrome-extension://${new URL(ext.worker.url()).host}/ui/options.html`);
  const started = Date.now();
  await options.locator('#library-archive').setInputFiles(corpusTarball);
  const ended = await importEnd(started, () => options.evaluate<string>(STATUS_EXPRESSION));
  // Extension pages share the service worker's process in Chromium: close the one used.
  await options.close();
  return ended;
}

/**
 * Chooses the archive at `archiveUrl` on Firefox's options page `options` (ready), with its
 * bytes fetched there: BiDi has no file chooser. The input gets a FileList and fires `change`.
 */
export async function importLibraryInFirefox(
  options: FirefoxTab,
  archiveUrl: string,
): Promise<{ importStatus: string; importSeconds: number }> {
  const started = Date.now();
  await options.evaluate(`(async () => {
    const bytes = await (await fetch(${JSON.stringify(archiveUrl)})).arrayBuffer();
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], 'https-everywhere-rules-2018.tar.gz'));
    const input = document.querySelector('#library-archive');
    input.files = dt.files;
    input.dispatchEvent(new Event('change'));
    return true;
  })()`);
  return importEnd(started, () => options.evaluate<string>(STATUS_EXPRESSION));
}
