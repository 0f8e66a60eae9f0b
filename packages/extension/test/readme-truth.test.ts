import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultSettings } from '../src/settings/schema.js';
import { HTTPS_FIRST_TIMEOUT_MS } from '../src/https-first/tracker.js';
import { KNOWN_HTTPS_TTL_MS, MAX_KNOWN_HTTPS_HOSTS } from '../src/protection/known-https-hosts.js';

// What the READMEs tell users about the extension, read from the READMEs themselves and held
// against the code: the labels they quote must be on screen, the defaults they state must be
// the settings' defaults.
const root = join(import.meta.dirname, '../../..');
const read = (file: string): string => readFileSync(join(root, file), 'utf8');

/** The part of the root README about the extension, and the extension's README. */
const texts = (): { file: string; text: string }[] => {
  const main = read('README.md');
  const start = main.indexOf('## The extension');
  const end = main.indexOf('\n## ', start + 1);
  expect(start).toBeGreaterThan(0);
  return [
    { file: 'README.md', text: main.slice(start, end) },
    { file: 'packages/extension/README.md', text: read('packages/extension/README.md') },
  ];
};

/** Every text the UI shows: the English messages, placeholders cut off. */
const uiTexts = (): string[] => {
  const messages = JSON.parse(
    read('packages/extension/static/_locales/en/messages.json'),
  ) as Record<string, { message: string }>;
  return Object.values(messages).map((m) => m.message.replace(/\$[A-Z0-9_]+\$/g, '').trim());
};

describe('the READMEs tell the truth about the extension', () => {
  it('every label they quote ("…") is one the UI shows', () => {
    const shown = uiTexts();
    const quoted = texts().flatMap(({ file, text }) =>
      [...text.matchAll(/"([A-Z][^"]{0,80})"/g)].map((m) => ({
        file,
        label: (m[1] as string).replace(/\s+/g, ' '),
      })),
    );
    expect(quoted.length).toBeGreaterThanOrEqual(10);
    // A label is the whole message, or its start before ":" or "…" ("Advanced: rewrite …").
    const missing = quoted.filter(
      ({ label }) =>
        !shown.some((s) => s === label || s.startsWith(`${label}:`) || s.startsWith(`${label}…`)),
    );
    expect(missing).toEqual([]);
  });

  it('the defaults they state are the settings schema defaults', () => {
    const defaults = defaultSettings();
    // Names a README uses for each switch; "X (on by default)", "X: off by default", "X … is on by default".
    const SWITCHES: [RegExp, boolean][] = [
      [
        /(?:HTTPS-first|Protection mode)\**\s*(?::|\(|is)\s*(on|off) by default/gi,
        defaults.httpsFirst,
      ],
      [/mixed-content rulesets[^.]*?(on|off) by default/gi, defaults.mixedContent],
    ];
    let claims = 0;
    for (const { file, text } of texts()) {
      for (const [pattern, value] of SWITCHES) {
        for (const m of text.matchAll(pattern)) {
          claims++;
          expect([file, m[0], m[1] === 'on']).toEqual([file, m[0], value]);
        }
      }
    }
    expect(claims).toBeGreaterThanOrEqual(3);
  });

  it('the figures they give are the ones the code uses', () => {
    const main = read('README.md');
    expect(main).toContain(`no answer within ${HTTPS_FIRST_TIMEOUT_MS / 1000} seconds`);
    const extension = read('packages/extension/README.md');
    expect(extension).toContain(
      `remembered for ${KNOWN_HTTPS_TTL_MS / 86_400_000} days (at most ${MAX_KNOWN_HTTPS_HOSTS.toLocaleString('en')}`,
    );
  });
});
