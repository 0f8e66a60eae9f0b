import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FINDING_CODES, UNLOADABLE_CODES } from '../src/authoring/finding-codes.js';

const engineSrc = resolve(__dirname, '../../engine/src');

/** The kebab-case string literals of the engine's sources under `dirs`. */
function literals(dirs: string[]): Set<string> {
  const found = new Set<string>();
  for (const dir of dirs) {
    for (const name of readdirSync(join(engineSrc, dir), { recursive: true }) as string[]) {
      if (!name.endsWith('.ts')) continue;
      for (const m of readFileSync(join(engineSrc, dir, name), 'utf8').matchAll(
        /'([a-z][a-z0-9]*(?:-[a-z0-9]+)+)'/g,
      ))
        found.add(m[1] as string);
    }
  }
  return found;
}

// Kebab-case strings there that are no finding code: the fixes' names and internal verdicts.
const NOT_CODES = ['escape-dot', 'securecookie-any', 'missing-group', 'too-complex'];

describe('the finding codes the config file may name', () => {
  it('are the codes the engine writes: a new code there must be added to FINDING_CODES', () => {
    const written = [...literals(['parse', 'lint', 'coverage', 'regex'])].filter(
      (c) => !NOT_CODES.includes(c),
    );
    expect(written.sort()).toEqual([...FINDING_CODES].sort());
    // Every error of the parser leaves the ruleset unloaded.
    for (const code of literals(['parse'])) expect(UNLOADABLE_CODES.has(code), code).toBe(true);
    for (const code of UNLOADABLE_CODES) expect(FINDING_CODES.has(code), code).toBe(true);
  });

  it('are all listed in docs/writing-rulesets.md', () => {
    const guide = readFileSync(resolve(__dirname, '../../../docs/writing-rulesets.md'), 'utf8');
    // The list: from the section's first item to the next heading.
    const start = guide.indexOf('\n- ', guide.indexOf('### Finding codes'));
    const section = guide.slice(start, guide.indexOf('\n#', start));
    const listed = [...section.matchAll(/`([a-z][a-z0-9-]+)`/g)]
      .map((m) => m[1] as string)
      .filter((c) => c.includes('-'));
    expect(new Set(listed)).toEqual(new Set(FINDING_CODES));
    expect(listed.length).toBe(FINDING_CODES.size);
  });
});
