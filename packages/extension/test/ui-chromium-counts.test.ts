import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLL, startUiHarness, type UiHarness } from './support/ui-harness.js';

/** The options page of a build with exactly one ruleset: every count it shows is 0 or 1. */
describe('counts of one in Chromium: singular wording on a real page', () => {
  let h: UiHarness;
  let o: Page;
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-ui-one-'));

  beforeAll(async () => {
    const rules = join(dir, 'rules');
    const files = join(dir, 'files');
    for (const d of [rules, files]) mkdirSync(d);
    writeFileSync(
      join(rules, 'one.xml'),
      '<ruleset name="Only One"><target host="one.example.test"/><rule from="^http:" to="https:"/></ruleset>',
    );
    h = await startUiHarness([rules], { modeOff: true });
    o = await h.openOptions();
  });

  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says "1 ruleset" in the footer and the ruleset list', async () => {
    await expect
      .poll(() => o.locator('#about-rulesets').textContent(), POLL)
      .toMatch(/^1 ruleset from \w+ \d+, \d{4}$/);
    await expect.poll(() => o.locator('#ruleset-count').textContent(), POLL).toBe('1 of 1 ruleset');
    await o.locator('#ruleset-search').fill('nothing like it');
    await expect.poll(() => o.locator('#ruleset-count').textContent(), POLL).toBe('0 of 1 ruleset');
  });

  it('says "1 entry added" after importing a one-entry HttpAllowlist, and counts 0 known sites in the plural', async () => {
    const file = join(dir, 'files', 'policy.json');
    writeFileSync(file, JSON.stringify(['printer.example.net']));
    await o.locator('#allowlist-import').setInputFiles(file);
    await expect
      .poll(() => o.locator('#allowlist-result').textContent(), POLL)
      .toBe('1 entry added.');
    expect(await o.locator('#known-hosts-text').textContent()).toMatch(
      /^0 sites have worked over HTTPS in this browser recently; their requests/,
    );
  });
});
