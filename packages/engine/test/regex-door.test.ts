import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/corpus.js';

/**
 * The regex door (src/regex/safe-regex.ts) must stay the only way a ruleset-sourced pattern
 * becomes a running matcher. This scans every source file of the three packages for the ways
 * JavaScript compiles a pattern at run time and allows only the places listed here, each with
 * the reason its pattern cannot come from a ruleset, a bundle, a channel or a user.
 */
const ALLOWED: Record<string, { count: number; why: string }> = {
  'packages/engine/src/regex/safe-regex.ts': {
    count: 7,
    why: 'the door itself: RegExp for the syntax message, proven patterns and those our own build proved, re2js for the linear route, long input to quadratic patterns and DNR filters',
  },
  'packages/engine/src/regex/compile-check.ts': {
    count: 1,
    why: 'compiles only, to get the syntax error; never runs the pattern',
  },
  'packages/engine/src/lint/regex-ast.ts': {
    count: 1,
    why: 'one character class (an AST node) tested on one character',
  },
  'packages/engine/src/dnr/host-labels.ts': {
    count: 1,
    why: 'one character class (an AST node) tested on one character',
  },
  'packages/engine/src/regex/fragment-groups.ts': {
    count: 1,
    why: 'one character class (an AST node) tested on one character',
  },
  'packages/engine/src/lint/host-language.ts': {
    count: 1,
    why: 'one character, set or class element (an AST node) tested on one character',
  },
  'packages/cli/src/links/decoded-text.ts': {
    count: 1,
    why: "a copy, with the g flag, of the caller's own RegExp (escape and reference syntax), never a ruleset's",
  },
  'packages/engine/src/dnr/emulate.ts': {
    count: 1,
    why: 'urlFilter from the DNR compiler: literal text (urlFilterSafe refuses * ^ |) around at most our own wildcards',
  },
};

/** `new RegExp(` / `RegExp(` calls, and re2js compiles outside the door. */
const COMPILES = /\bRegExp\s*\(|(?:RE2JS|re2js\(\))\s*\.\s*compile\s*\(/g;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

describe('the regex door is the only place patterns are compiled', () => {
  it('no other source file compiles a regex from a string', () => {
    const found: Record<string, number> = {};
    for (const pkg of ['engine', 'cli', 'extension']) {
      for (const file of sourceFiles(join(repoRoot, 'packages', pkg, 'src'))) {
        // Comments may mention RegExp; code may not call it.
        const code = readFileSync(file, 'utf8')
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/^\s*\/\/.*$/gm, '');
        const calls = (code.match(COMPILES) ?? []).length;
        if (calls > 0) found[relative(repoRoot, file)] = calls;
      }
    }
    const allowed = Object.fromEntries(
      Object.entries(ALLOWED).map(([file, { count }]) => [file, count]),
    );
    expect(found).toEqual(allowed);
  });

  it('only the door reaches re2js', () => {
    // re2js-module.ts hands re2js out (lazily in the Node build); everyone else goes through the door.
    const reaching: string[] = [];
    for (const pkg of ['engine', 'cli', 'extension']) {
      for (const file of sourceFiles(join(repoRoot, 'packages', pkg, 'src'))) {
        if (
          /^import\s+(?!type\b)[^;]*from\s+'(re2js|[./]*re2js-module\.js)'/m.test(
            readFileSync(file, 'utf8'),
          )
        )
          reaching.push(relative(repoRoot, file));
      }
    }
    expect(reaching.sort()).toEqual([
      'packages/engine/src/regex/re2js-module.ts',
      'packages/engine/src/regex/safe-regex.ts',
    ]);
  });
});
