import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);

/** axe-core's own source (pinned in package.json), injected into the page under test. */
export const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** WCAG 2.1 A and AA plus axe's best practices (landmarks, headings, one main). */
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

/**
 * An expression that runs axe over the whole document and yields its violations as
 * "rule: selector, selector" lines. Evaluated by the driver, so the page's CSP does not apply.
 */
export const AXE_EXPRESSION = `(async () => {
  if (globalThis.axe === undefined) { ${AXE_SOURCE}\n }
  const result = await globalThis.axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(TAGS)} } });
  return result.violations.map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', '));
})()`;

export function axeViolations(page: Page): Promise<string[]> {
  return page.evaluate(AXE_EXPRESSION) as Promise<string[]>;
}
