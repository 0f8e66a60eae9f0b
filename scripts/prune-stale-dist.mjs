#!/usr/bin/env node
/**
 * `prepack` of the published packages: removes build output whose source is gone. `tsc -b`
 * never deletes what an earlier build wrote, so a module deleted or moved locally would still
 * be packed (a clean clone has none). Generated folders that have no one-to-one source (the
 * Node bundle, the precompiled defaults) are left alone. Prints what it removed.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';

/** Output folders built from the whole package by their own scripts, not file by file. */
const GENERATED = new Set(['node-bundle', 'defaults']);
/** What tsc writes for `x.ts`. */
const OUTPUT = /(\.d\.ts\.map|\.d\.ts|\.js\.map|\.js)$/;

const pkg = process.cwd();
const dist = join(pkg, 'dist');
const src = join(pkg, 'src');
const removed = [];

function walk(dir, top) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!(top && GENERATED.has(entry.name))) walk(path, false);
      continue;
    }
    const rel = relative(dist, path);
    const stem = rel.replace(OUTPUT, '');
    if (stem === rel) continue;
    if (!existsSync(join(src, `${stem}.ts`)) && !existsSync(join(src, `${stem}.mts`))) {
      rmSync(path);
      removed.push(rel);
    }
  }
}

if (existsSync(dist)) walk(dist, true);
for (const rel of removed.sort())
  process.stderr.write(`prepack: removed dist/${rel} (its source is gone)\n`);
