import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';

/** Icon sizes the manifest lists (toolbar 16/32, management pages 48/128). */
export const ICON_SIZES = [16, 32, 48, 128] as const;

/**
 * The closed green padlock of the "active" state as static PNGs, for the manifest and for the
 * moments before the background draws per-tab icons. Drawn on a 16-unit grid like the runtime
 * icon (icon.ts), with 4×4 supersampling for smooth edges.
 */
export function padlockPng(
  size: number,
  colour: [number, number, number] = [0x1a, 0x7f, 0x37],
): Buffer {
  const png = new PNG({ width: size, height: size });
  const u = size / 16;
  const inBody = (x: number, y: number) => {
    // Rounded rectangle from (2, 7.5) to (14, 15.5), radius 1.5.
    const cx = Math.min(Math.max(x, 3.5), 12.5);
    const cy = Math.min(Math.max(y, 9), 14);
    return x >= 2 && x <= 14 && y >= 7.5 && y <= 15.5 && (x - cx) ** 2 + (y - cy) ** 2 <= 1.5 ** 2;
  };
  const inShackle = (x: number, y: number) => {
    // Upper half ring around (8, 6), radius 3.5, 2 units thick, plus its two legs down to the body.
    const d = Math.hypot(x - 8, y - 6);
    if (y <= 6) return d >= 2.5 && d <= 4.5;
    return y <= 8 && ((x >= 3.5 && x <= 5.5) || (x >= 10.5 && x <= 12.5));
  };
  const inKeyhole = (x: number, y: number) =>
    Math.hypot(x - 8, y - 11) <= 1.5 || (x >= 7.4 && x <= 8.6 && y >= 11 && y <= 14);
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let hits = 0;
      for (let sy = 0; sy < 4; sy++) {
        for (let sx = 0; sx < 4; sx++) {
          const x = (px + (sx + 0.5) / 4) / u;
          const y = (py + (sy + 0.5) / 4) / u;
          if ((inBody(x, y) && !inKeyhole(x, y)) || inShackle(x, y)) hits++;
        }
      }
      const i = (py * size + px) * 4;
      png.data[i] = colour[0];
      png.data[i + 1] = colour[1];
      png.data[i + 2] = colour[2];
      png.data[i + 3] = Math.round((hits / 16) * 255);
    }
  }
  return PNG.sync.write(png);
}

/** Writes `icons/icon-<size>.png` and returns the manifest's size → path map. */
export function writeIcons(dir: string): Record<string, string> {
  mkdirSync(join(dir, 'icons'), { recursive: true });
  const paths: Record<string, string> = {};
  for (const size of ICON_SIZES) {
    const path = `icons/icon-${size}.png`;
    writeFileSync(join(dir, path), padlockPng(size));
    paths[String(size)] = path;
  }
  return paths;
}
