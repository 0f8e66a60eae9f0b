import { realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { decodeUtf8, LIBRARY_LIMITS } from '@httpsify/engine/library';
import { parseRulesetXml } from '@httpsify/engine/parse';
import { readRegularFile, writeFileAtomic } from '@httpsify/engine/node';
import { disableRulesetFile } from '../fetch-test/disable-ruleset.js';
import { SWEEP_OFF_PREFIX } from './job-source.js';
import type { RulesetHealth, SweepSummary } from './summary.js';

const HEADING = 'Disabled by httpsify sweep because:';
const COMMENT = /<!-- Disabled by httpsify sweep because:[\s\S]*?-->\r?\n/;
const ATTRIBUTE =
  /(<ruleset\b[^>]*?)\s+default_off\s*=\s*(?:"sweep failed: [^"]*"|'sweep failed: [^']*')/;

export interface WriteBackOutcome {
  disabled: string[];
  enabled: string[];
  /** Failing now, but not yet confirmed by an earlier sweep (left as they are). */
  unconfirmed: string[];
  /** Files that could not be edited, with why (left as they are). */
  errors: string[];
}

/** Turns a ruleset the sweep had turned off back on: its attribute and its comment go. */
export function enableRulesetText(text: string): string {
  if (!ATTRIBUTE.test(text)) throw new Error('its default_off was not written by a sweep');
  return text.replace(ATTRIBUTE, '$1').replace(COMMENT, '');
}

/**
 * Whether `file` is one of the library's own ruleset files: inside a library directory or one
 * of its file arguments, real paths compared (a results line naming another file, or a symlink
 * out of the library, edits nothing).
 */
export function inLibrary(file: string, library: readonly string[]): boolean {
  let real: string;
  try {
    real = realpathSync(resolve(file));
  } catch {
    return false;
  }
  return library.some((path) => {
    let root: string;
    try {
      root = realpathSync(resolve(path));
    } catch {
      return false;
    }
    return real === root || real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
  });
}

const judged = (h: RulesetHealth | undefined): boolean =>
  h !== undefined && (h.health === 'ok' || h.health === 'warning');

/**
 * `--write`: a ruleset is turned off only when this sweep and an earlier one, finished at least
 * `confirmAfterMs` before this one started, both found it failing; one the sweep had turned off
 * is turned back on when both found it working. Anything else is left alone, and so is every
 * ruleset that was off for another reason. Each edit is checked by parsing and written atomically.
 */
export async function writeBack(
  current: SweepSummary,
  previous: SweepSummary | null,
  confirmAfterMs: number,
  library: readonly string[],
): Promise<WriteBackOutcome> {
  const out: WriteBackOutcome = { disabled: [], enabled: [], unconfirmed: [], errors: [] };
  const confirmed = previous !== null && previous.finishedAt + confirmAfterMs <= current.startedAt;
  const before = new Map((previous?.rulesets ?? []).map((h) => [h.file, h]));
  for (const h of current.rulesets) {
    // Rulesets read from an archive (shown as ARCHIVE/ENTRY.xml) are not written back into it.
    if (
      !h.file.endsWith('.xml') ||
      /\.(tar|tgz|zip)(\.gz)?\//i.test(h.file) ||
      h.file.includes('.tar')
    )
      continue;
    if (!inLibrary(h.file, library)) {
      out.errors.push(`${h.file}: not a file of the swept library, left unchanged`);
      continue;
    }
    const p = before.get(h.file);
    try {
      const bytes = readRegularFile(h.file, LIBRARY_LIMITS.fileBytes);
      // Edited as text and written back: only strict UTF-8 survives that byte for byte.
      const text = decodeUtf8(bytes, { keepBom: true });
      const parsed = parseRulesetXml(text, h.file).ruleset;
      if (parsed === null) throw new Error('no longer parses');
      const off = parsed.defaultOff;
      if (h.health === 'failing' && off === undefined) {
        if (!confirmed || p?.health !== 'failing') {
          out.unconfirmed.push(h.file);
          continue;
        }
        const why = [...new Set(h.reasons.map((r) => r.slice(0, r.indexOf(':'))))].join(', ');
        await disableRulesetFile(h.file, h.reasons, {
          note: `${SWEEP_OFF_PREFIX}${why}`,
          heading: HEADING,
        });
        out.disabled.push(h.file);
      } else if (
        judged(h) &&
        off !== undefined &&
        off.startsWith(SWEEP_OFF_PREFIX) &&
        confirmed &&
        judged(p)
      ) {
        const edited = enableRulesetText(text);
        const check = parseRulesetXml(edited, h.file).ruleset;
        if (check === null || check.defaultOff !== undefined)
          throw new Error('the edit would not parse as on');
        await writeFileAtomic(h.file, edited, statSync(h.file).mode & 0o777);
        out.enabled.push(h.file);
      }
    } catch (err) {
      out.errors.push(`${h.file}: ${(err as Error).message}, left unchanged`);
    }
  }
  return out;
}
