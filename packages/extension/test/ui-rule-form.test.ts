import { createEngine, type Ruleset } from '@httpsify/engine';
import { lintRulesetSource } from '@httpsify/engine/authoring';
import { describe, expect, it } from 'vitest';
import { simpleRuleXml } from '../src/settings/user-rules.js';
import { formRule, isSiteName } from '../src/ui/shared/rule-form.js';

/** The rule the options page's plain form saves, checked and run as the extension runs it. */
function saved(
  site: string,
  to: string,
): { rewrite: (url: string) => string | null; errors: string[] } {
  const rule = formRule(site, to);
  const { ruleset, diagnostics } = lintRulesetSource(simpleRuleXml(rule), 'user-rule.xml');
  const errors = diagnostics
    .filter((d) => d.severity === 'error')
    .map((d) => `${d.code}: ${d.message}`);
  const engine = createEngine(ruleset === null ? [] : [ruleset as Ruleset]);
  return { rewrite: (url) => engine.rewrite(url), errors };
}

describe('"Write a rule": which site, where it goes', () => {
  it('a name, or a pasted address, is the site; empty "where it goes" means the same site over HTTPS', () => {
    for (const site of [
      'plain.example.test',
      'http://Plain.Example.test/some/page?q=1',
      '  https://plain.example.test  ',
    ]) {
      const r = saved(site, '');
      expect(r.errors, site).toEqual([]);
      expect(r.rewrite('http://plain.example.test/a?b=1')).toBe('https://plain.example.test/a?b=1');
      expect(r.rewrite('http://other.example.test/')).toBeNull();
    }
  });

  it('"where it goes" takes another site by name or pasted address', () => {
    for (const to of ['www.plain.example.test', 'https://www.plain.example.test/landing']) {
      const r = saved('plain.example.test', to);
      expect(r.errors, to).toEqual([]);
      expect(r.rewrite('http://plain.example.test/a')).toBe('https://www.plain.example.test/a');
    }
  });

  it('what is not a site is refused, never saved as something else', () => {
    expect(formRule('plain.example.test', 'my bank').toProblem).toBe(true);
    expect(formRule('plain.example.test', 'https://').toProblem).toBe(true);
    // A site field that is no name goes to the checks as typed, and they refuse it.
    expect(saved('my bank', '').errors).not.toEqual([]);
  });

  it('the popup and the options page judge a typed site alike, the open page’s port kept', () => {
    for (const typed of ['my bank', 'my%20bank', 'http://', ''])
      expect(isSiteName(typed), typed).toBe(false);
    for (const typed of ['plain.example.test', 'http://plain.example.test:8080/x', '[::1]'])
      expect(isSiteName(typed), typed).toBe(true);
    // The popup's "Always use HTTPS" on a page served from another port keeps that port.
    const rule = formRule('plain.example.test', '', '8080');
    expect(
      createEngine([lintRulesetSource(simpleRuleXml(rule), 'r.xml').ruleset as Ruleset]).rewrite(
        'http://plain.example.test:8080/a',
      ),
    ).toBe('https://plain.example.test:8080/a');
  });
});
