import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { zipSync, type Zippable } from 'fflate';

/** Packs a directory into a zip (what the Chrome Web Store and AMO take), files in stable order. */
export function zipDirectory(dir: string, outFile: string): void {
  const files: Zippable = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      // A fixed timestamp keeps packages reproducible.
      else
        files[relative(dir, path).split(sep).join('/')] = [
          readFileSync(path),
          { mtime: new Date('2020-01-01T00:00:00Z') },
        ];
    }
  };
  walk(dir);
  writeFileSync(outFile, zipSync(files, { level: 9 }));
}
