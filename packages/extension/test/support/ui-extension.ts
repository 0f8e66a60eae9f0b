import { PNG } from 'pngjs';
import { buildExtension, type BuildResult } from '../../src/packaging/build.js';

/** 14 November 2023, 22:13 UTC. */
export const UI_RULESETS_TIMESTAMP = 1_700_000_000;

/** A Chromium build of the given rulesets (the build includes the UI pages). */
export async function buildWithUi(rulesets: string[], outDir: string): Promise<BuildResult> {
  // Stamped like a real ruleset release, so the options page has a date to show.
  return buildExtension({
    rulesets,
    outDir,
    browsers: ['chromium'],
    zip: false,
    timestamp: UI_RULESETS_TIMESTAMP,
  });
}

/**
 * Whether a screenshot shows a rendered page rather than a blank or single-colour surface:
 * enough distinct colours and enough pixels away from the dominant colour.
 */
export function screenshotStats(png: Buffer): {
  width: number;
  height: number;
  colours: number;
  nonBackground: number;
} {
  const img = PNG.sync.read(png);
  const counts = new Map<number, number>();
  for (let i = 0; i < img.data.length; i += 4) {
    const key =
      ((img.data[i] as number) << 16) |
      ((img.data[i + 1] as number) << 8) |
      (img.data[i + 2] as number);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const dominant = Math.max(...counts.values());
  const total = img.width * img.height;
  return {
    width: img.width,
    height: img.height,
    colours: counts.size,
    nonBackground: (total - dominant) / total,
  };
}
