import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderArrows, folderCycles, uiPageFolder } from '../../../scripts/import-graph.js';

const SRC = join(import.meta.dirname, '../src');

/**
 * The extension's folders in layers, bottom first (docs/architecture.md draws them). A folder
 * imports only folders of lower layers; folders of one layer do not import each other. A new
 * folder must be placed here before it can be imported.
 */
const LAYERS: string[][] = [
  ['platform'], // the one door to the browser, the packaged file names
  ['site-rules'], // site patterns and the names HTTPS-first leaves alone
  ['decision'], // decide(): one request, one answer
  ['dnr'], // Chromium's rules: layout, writer, planners
  ['settings'], // the stored settings: schema, store, repair, import
  ['channels'], // update channels
  ['library'], // the imported ruleset library
  ['dnr-runtime'], // Chromium: channel, library and override rules kept in line
  ['https-first'], // upgrade tracking, fallback, loop guard, page tickets
  ['protection'], // protection mode: known HTTPS hosts, rechecks
  ['protocol'], // the pages' contract with the background (types)
  ['rewriter'], // the engines and their layers, the Firefox blocking door
  ['cookies'], // securecookie
  ['status'], // what the popup and the icon show, statistics
  ['routing'], // the pages' requests: port, senders, controller, router
  ['handoff'], // Chromium's main-frame handoff
  ['background'], // the two composition roots (chromium.ts, firefox.ts)
  ['ui/shared'], // what every page uses
  ['ui/popup', 'ui/options', 'ui/fallback', 'ui/handoff'], // the pages, one bundle each
  ['packaging'], // the Node tool that writes the packages; nothing at run time imports it
];

const layerOf = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i] as const)));

describe('the extension looks down', () => {
  const arrows = folderArrows(SRC, uiPageFolder);

  it('places every folder of src in a layer', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .flatMap((e) =>
        e.name === 'ui'
          ? readdirSync(join(SRC, 'ui'), { withFileTypes: true })
              .filter((p) => p.isDirectory())
              .map((p) => `ui/${p.name}`)
          : [e.name],
      );
    expect(folders.filter((f) => !layerOf.has(f))).toEqual([]);
  });

  it('has no import of a folder above or beside its own', () => {
    const upward = arrows
      .filter((a) => (layerOf.get(a.to) ?? Infinity) >= (layerOf.get(a.from) ?? -Infinity))
      .map((a) => `${a.file} -> ${a.specifier}`);
    expect(upward).toEqual([]);
  });

  it('has no folder cycle', () => {
    expect(folderCycles(arrows)).toEqual([]);
  });
});
