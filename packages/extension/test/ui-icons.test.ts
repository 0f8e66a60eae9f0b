import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { ICON_SIZES, padlockPng } from '../src/packaging/icons.js';
import { uiManifestEntries } from '../src/packaging/ui-assets.js';

describe('generated icons', () => {
  it.each(ICON_SIZES)(
    'draws a %ipx padlock: opaque body, transparent background, keyhole',
    (size) => {
      const img = PNG.sync.read(padlockPng(size));
      expect([img.width, img.height]).toEqual([size, size]);
      const alpha = (x: number, y: number) =>
        img.data[(Math.floor(y) * size + Math.floor(x)) * 4 + 3] as number;
      const u = size / 16;
      expect(alpha(0, 0)).toBe(0);
      expect(alpha(3 * u, 12 * u)).toBe(255);
      expect(alpha(8 * u, 11 * u)).toBe(0);
    },
  );

  it('the manifest lists them for the toolbar and the extension pages', () => {
    const m = uiManifestEntries('chromium') as {
      icons: Record<string, string>;
      action: { default_icon: Record<string, string> };
    };
    expect(Object.keys(m.icons)).toEqual(['16', '32', '48', '128']);
    expect(m.action.default_icon['16']).toBe('icons/icon-16.png');
  });
});
