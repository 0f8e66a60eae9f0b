/**
 * The pages' requests about settings files and user rules: export, the import's preview and
 * its all-or-nothing apply (import.ts checks the file), saving and importing user rules.
 */
import { createEngine } from '@httpsify/engine';
import type {
  ImportApplyResult,
  ImportPreview,
  ImportResult,
  SaveResult,
} from '../protocol/ui-protocol.js';
import { exportSettingsFile, parseSettingsFile } from '../settings/import.js';
import {
  channelNameClashes,
  ImportRefused,
  importPatch,
  planImport,
} from '../settings/import-plan.js';
import type { Settings } from '../settings/schema.js';
import {
  loadUserRuleChecks,
  splitRulesetXml,
  toUserRule,
  upsertUserRule,
} from '../settings/user-rules.js';

/** The settings as they are now, and the one way to change them (a serialised store write). */
export interface SettingsWriter {
  readonly settings: Settings;
  update(change: (s: Settings) => Partial<Settings> | void): Promise<Settings>;
}

export function exportSettings(w: SettingsWriter): Record<string, unknown> {
  return exportSettingsFile(w.settings);
}

/** Checks a settings file whole and says what importing it would change; changes nothing. */
export async function previewImport(w: SettingsWriter, text: unknown): Promise<ImportPreview> {
  await loadUserRuleChecks();
  const parsed = parseSettingsFile(text);
  if (!parsed.ok) return parsed;
  const clashes = channelNameClashes(parsed.values, w.settings);
  if (clashes.length > 0) return { ok: false, problems: clashes };
  return { ok: true, ...planImport(parsed.values, w.settings) };
}

/**
 * Applies a settings file in one write, or nothing: the file is checked again, and refused if
 * it would add or redefine a channel or a user rule the user did not confirm by name.
 */
export async function applyImport(
  w: SettingsWriter,
  text: unknown,
  confirmedChannels: unknown,
  confirmedUserRules?: unknown,
): Promise<ImportApplyResult> {
  await loadUserRuleChecks();
  const parsed = parseSettingsFile(text);
  if (!parsed.ok) return parsed;
  const names = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter((n): n is string => typeof n === 'string') : [];
  try {
    const settings = await w.update((current) =>
      importPatch(parsed.values, current, names(confirmedChannels), names(confirmedUserRules)),
    );
    return { ok: true, settings };
  } catch (e) {
    if (e instanceof ImportRefused) return { ok: false, problems: e.problems };
    throw e;
  }
}

export async function saveUserRule(
  w: SettingsWriter,
  xml: string,
  replacing?: string,
): Promise<SaveResult> {
  await loadUserRuleChecks();
  const checked = toUserRule(xml);
  if ('errors' in checked) return { ok: false, errors: checked.errors };
  try {
    // The engine must accept it too (its regex guard can refuse what the linter let through).
    createEngine([checked.ruleset]);
  } catch (e) {
    return {
      ok: false,
      errors: [
        {
          severity: 'error',
          code: 'engine',
          message: String(e),
          file: 'user-rule.xml',
          line: 1,
          column: 1,
        },
      ],
    };
  }
  const clash = w.settings.userRules.some(
    (r) => r.name === checked.rule.name && r.name !== replacing,
  );
  if (clash && replacing !== undefined) {
    const message = `a user rule named "${checked.rule.name}" already exists`;
    return {
      ok: false,
      errors: [
        {
          severity: 'error',
          code: 'duplicate-name',
          message,
          file: 'user-rule.xml',
          line: 1,
          column: 1,
        },
      ],
    };
  }
  const settings = await w.update((s) => ({
    userRules: upsertUserRule(s.userRules, checked.rule, replacing),
  }));
  return { ok: true, errors: [], settings };
}

export async function importUserRules(w: SettingsWriter, text: string): Promise<ImportResult> {
  const problems: string[] = [];
  await loadUserRuleChecks();
  const rules = splitRulesetXml(text).flatMap((xml, i) => {
    const r = toUserRule(xml);
    if ('errors' in r) {
      problems.push(
        `ruleset ${i + 1}: ${r.errors.map((e) => `${e.line}:${e.column} ${e.message}`).join('; ')}`,
      );
      return [];
    }
    return [r.rule];
  });
  if (rules.length === 0)
    return { ok: false, problems: problems.length > 0 ? problems : ['no <ruleset> found'] };
  const settings = await w.update((s) => ({
    userRules: rules.reduce((list, r) => upsertUserRule(list, r), s.userRules),
  }));
  return { ok: problems.length === 0, problems, added: rules.length, settings };
}
