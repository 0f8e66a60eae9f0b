import { cpSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';
import {
  FALLBACK_PAGE,
  HANDOFF_PAGE,
  OPTIONS_PAGE,
  POPUP_PAGE,
} from '../platform/packaged-files.js';
import { ICON_SIZES, writeIcons } from './icons.js';
import type { Browser } from './manifest.js';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The UI pages: each is an HTML file, its stylesheet and one bundled script, all in `ui/`. */
const PAGES = ['popup', 'options', 'fallback', 'handoff'] as const;
/** The handoff page serves Chromium's DNR only (Firefox's engine decides every request itself). */
const pagesFor = (browser: Browser) =>
  PAGES.filter((p) => p !== 'handoff' || browser === 'chromium');
/** Pages whose script is a classic one, run before the rest of the page loads (handoff.ts says why). */
const CLASSIC_SCRIPT_PAGES: ReadonlySet<string> = new Set(['handoff']);

/** Writes the pages, the shared stylesheet and `_locales` into an unpacked extension directory. */
export async function buildUiAssets(dir: string, browser: Browser): Promise<void> {
  const ui = join(dir, 'ui');
  mkdirSync(ui, { recursive: true });
  const common = {
    outdir: ui,
    bundle: true,
    platform: 'browser',
    target: browser === 'chromium' ? 'chrome120' : 'firefox140',
    minify: false,
    sourcemap: false,
    logLevel: 'silent',
  } as const;
  await esbuild({
    ...common,
    entryPoints: [
      ...pagesFor(browser)
        .filter((p) => !CLASSIC_SCRIPT_PAGES.has(p))
        .map((p) => ({ in: join(packageDir, `src/ui/${p}/${p}.ts`), out: p })),
      // The options page unpacks library archives in this worker (library/archive-reader.ts).
      { in: join(packageDir, 'src/library/archive-worker.ts'), out: 'archive-worker' },
    ],
    format: 'esm',
  });
  const classic = pagesFor(browser).filter((p) => CLASSIC_SCRIPT_PAGES.has(p));
  if (classic.length > 0) {
    await esbuild({
      ...common,
      entryPoints: classic.map((p) => ({ in: join(packageDir, `src/ui/${p}/${p}.ts`), out: p })),
      format: 'iife',
    });
  }
  for (const p of pagesFor(browser)) {
    cpSync(join(packageDir, `src/ui/${p}/${p}.html`), join(ui, `${p}.html`));
    cpSync(join(packageDir, `src/ui/${p}/${p}.css`), join(ui, `${p}.css`));
  }
  cpSync(join(packageDir, 'src/ui/shared/theme.css'), join(ui, 'theme.css'));
  cpSync(join(packageDir, 'static/_locales'), join(dir, '_locales'), { recursive: true });
  writeIcons(dir);
}

/** Manifest keys the UI adds (merged over the background's manifest). */
export function uiManifestEntries(browser: Browser): Record<string, unknown> {
  const icons = Object.fromEntries(ICON_SIZES.map((s) => [String(s), `icons/icon-${s}.png`]));
  return {
    default_locale: 'en',
    icons,
    action: {
      default_popup: POPUP_PAGE,
      default_title: 'httpsify',
      default_icon: { '16': icons['16'], '32': icons['32'] },
    },
    options_ui: { page: OPTIONS_PAGE, open_in_tab: true },
    // The fallback page is opened by the background, but back/forward can reach it from a site.
    web_accessible_resources: [
      browser === 'chromium'
        ? {
            resources: [FALLBACK_PAGE, 'ui/fallback.js', 'ui/fallback.css', 'ui/theme.css'],
            matches: ['<all_urls>'],
            use_dynamic_url: true,
          }
        : {
            resources: [FALLBACK_PAGE, 'ui/fallback.js', 'ui/fallback.css', 'ui/theme.css'],
            matches: ['<all_urls>'],
          },
      // Chromium's DNR rules redirect main frames to the handoff page by its fixed address.
      ...(browser === 'chromium'
        ? [
            {
              resources: [HANDOFF_PAGE, 'ui/handoff.js', 'ui/handoff.css', 'ui/theme.css'],
              matches: ['<all_urls>'],
            },
          ]
        : []),
    ],
  };
}
