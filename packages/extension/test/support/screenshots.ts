import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { screenshotStats } from './ui-extension.js';

// Shared by both browsers' page tests, so it starts no browser itself.

/** Screenshots land here (outside the tree; HTTPSIFY_SHOTS picks the folder) and are checked for real rendering. */
export const SHOTS =
  process.env.HTTPSIFY_SHOTS ?? mkdtempSync(join(tmpdir(), 'httpsify-ui-shots-'));

/** Keeps a screenshot in SHOTS and checks it is a real rendering: size, colours, not one flat surface. */
export function checkScreenshot(png: Buffer, name: string, width?: number): void {
  writeFileSync(join(SHOTS, `${name}.png`), png);
  const stats = screenshotStats(png);
  if (width !== undefined) expect(stats.width, `${name}: width`).toBe(width);
  else expect(stats.width, `${name}: width`).toBeGreaterThan(100);
  expect(stats.height, `${name}: height`).toBeGreaterThan(60);
  expect(stats.colours, `${name}: distinct colours`).toBeGreaterThan(20);
  expect(stats.nonBackground, `${name}: share of non-background pixels`).toBeGreaterThan(0.01);
}

/** Visible text as rendered (innerText applies text-transform, so compared case-insensitively). */
export function expectVisibleTexts(innerText: string, name: string, texts: string[]): void {
  const shown = innerText.toLowerCase();
  for (const text of texts) expect(shown, `${name}: visible text`).toContain(text.toLowerCase());
}
