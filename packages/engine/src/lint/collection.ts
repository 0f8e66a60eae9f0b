import type { Diagnostic, Ruleset } from '../model/ruleset.js';
import { diagnosticAt } from './diagnostic.js';

export interface LintedFile {
  file: string;
  ruleset: Ruleset;
}

function baseName(file: string): string {
  return file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
}

/** Characters the ruleset file names of the reference project use (all 24,264 of them). */
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]*\.xml$/;

/**
 * Checks that need every ruleset at once: a host targeted by several rulesets (the first in file
 * order shadows the others), duplicate ruleset names (users toggle rulesets by name), and file
 * names (safe characters, no case-insensitive clashes that break some file systems).
 */
export function lintCollection(files: readonly LintedFile[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const byHost = new Map<string, LintedFile[]>();
  const byName = new Map<string, LintedFile[]>();
  const byLowerFile = new Map<string, string[]>();
  for (const entry of files) {
    const hosts = new Set(entry.ruleset.targets.map((t) => t.host));
    for (const host of hosts) {
      const list = byHost.get(host) ?? [];
      list.push(entry);
      byHost.set(host, list);
    }
    const named = byName.get(entry.ruleset.name) ?? [];
    named.push(entry);
    byName.set(entry.ruleset.name, named);
    const base = baseName(entry.file);
    const lower = byLowerFile.get(base.toLowerCase()) ?? [];
    lower.push(entry.file);
    byLowerFile.set(base.toLowerCase(), lower);
    if (!FILE_NAME.test(base)) {
      out.push(
        diagnosticAt(
          undefined,
          'error',
          'file-name',
          `file name "${base}" should be the site name with only A-Z, a-z, 0-9, ".", "_", "+", "-" and end in ".xml"`,
          entry.file,
        ),
      );
    }
  }
  for (const [host, entries] of byHost) {
    if (entries.length < 2) continue;
    for (const entry of entries) {
      const others = entries.filter((e) => e !== entry).map((e) => baseName(e.file));
      const target = entry.ruleset.targets.find((t) => t.host === host);
      out.push(
        diagnosticAt(
          target?.loc ?? entry.ruleset.loc,
          'warning',
          'duplicate-target',
          `target "${host}" is also a target of ${others.join(', ')}; rulesets are tried in file-name order`,
          entry.file,
        ),
      );
    }
  }
  for (const [name, entries] of byName) {
    if (entries.length < 2) continue;
    for (const entry of entries) {
      const others = entries.filter((e) => e !== entry).map((e) => baseName(e.file));
      out.push(
        diagnosticAt(
          entry.ruleset.loc,
          'warning',
          'duplicate-name',
          `ruleset name "${name}" is also used by ${others.join(', ')}; users turn rulesets on and off by name`,
          entry.file,
        ),
      );
    }
  }
  for (const clash of byLowerFile.values()) {
    if (clash.length < 2) continue;
    for (const file of clash) {
      out.push(
        diagnosticAt(
          undefined,
          'error',
          'file-name',
          `file name differs only in case from ${clash
            .filter((f) => f !== file)
            .map(baseName)
            .join(', ')}; that breaks case-insensitive file systems`,
          file,
        ),
      );
    }
  }
  return out;
}
