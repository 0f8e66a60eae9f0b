import { lintRulesetSource } from '@httpsify/engine/authoring';
import type { ImportResult, SaveResult } from '../../protocol/ui-protocol.js';
import type { Settings } from '../../settings/schema.js';
import { exportUserRulesXml } from '../../settings/user-rules.js';
import { background, isError } from '../shared/client.js';
import { $, download, h } from '../shared/dom.js';
import { t, tCount } from '../shared/i18n.js';
import { details, problemItem } from '../shared/problem.js';
import { ruleProblem, ruleProblemDetails } from '../shared/rule-problem.js';

/** One finding of the checks: "Line 3: <what is wrong and how to fix it>", the raw finding under "Details". */
export function ruleProblemItem(d: {
  line: number;
  column: number;
  severity: string;
  code: string;
  message: string;
}): HTMLLIElement {
  return problemItem(
    t('ruleProblemAt', [String(d.line), t(ruleProblem(d))]),
    ruleProblemDetails(d),
    d.severity,
  );
}

/** User rules: list, edit in an XML editor checked live (`httpsify check` messages), import/export. */
export class UserRulesView {
  private editing: string | undefined;
  private settings: Settings | null = null;
  private lintTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly onChange: (s: Settings) => void) {
    const editor = $<HTMLTextAreaElement>('#rule-editor');
    editor.addEventListener('input', () => {
      if (this.lintTimer !== null) clearTimeout(this.lintTimer);
      this.lintTimer = setTimeout(() => this.lint(), 150);
    });
    $('#rule-save').addEventListener('click', () => void this.save());
    $('#rule-cancel').addEventListener('click', () => {
      $('#rule-editor-panel').hidden = true;
      this.editing = undefined;
    });
    $('#user-rules-export').addEventListener('click', () =>
      download(
        'httpsify-user-rules.xml',
        exportUserRulesXml(this.settings?.userRules ?? []),
        'text/xml',
      ),
    );
    $<HTMLInputElement>('#user-rules-import').addEventListener('change', async (e) => {
      const input = e.target as HTMLInputElement;
      const file = input.files?.[0];
      if (file === undefined) return;
      const result = await background.request<ImportResult>({
        type: 'userRulesImport',
        xml: await file.text(),
      });
      input.value = '';
      const out = $('#user-rules-import-result');
      out.className = result.ok ? 'ok' : 'error';
      if (result.ok)
        out.textContent = tCount(
          'optionsImportedRules',
          result.added ?? 0,
          String(result.added ?? 0),
        );
      else {
        const added = result.added ?? 0;
        const sentence =
          added > 0
            ? tCount('optionsImportSomeRules', added, String(added))
            : t('optionsImportNoRules');
        out.replaceChildren(h('span', {}, sentence), details(result.problems.join('\n')));
      }
      if (result.settings) this.onChange(result.settings);
    });
  }

  render(s: Settings): void {
    this.settings = s;
    $('#no-user-rules').hidden = s.userRules.length > 0;
    $('#user-rule-list').replaceChildren(
      ...s.userRules.map((r) =>
        h(
          'li',
          {},
          h('span', {}, r.name),
          h('button', {
            type: 'button',
            textContent: t('commonEdit'),
            'aria-label': t('commonEditNamed', r.name),
            onclick: () => this.edit(r.name, r.xml),
          }),
          h('button', {
            type: 'button',
            class: 'danger',
            textContent: t('commonRemove'),
            'aria-label': t('commonRemoveNamed', r.name),
            onclick: async () => {
              // A rule is the user's own writing: removing it is the one thing here that cannot be undone.
              if (confirm(t('optionsUserRuleRemoveConfirm', r.name)))
                this.onChange(
                  await background.request<Settings>({ type: 'userRuleRemove', name: r.name }),
                );
            },
          }),
        ),
      ),
    );
  }

  /** Opens the XML editor on `xml`: a new rule, or the rule named `name`. */
  edit(name: string | undefined, xml: string): void {
    this.editing = name;
    const editor = $<HTMLTextAreaElement>('#rule-editor');
    $('#rule-editor-panel').hidden = false;
    editor.value = xml;
    $('#editor-title').textContent =
      name === undefined ? t('optionsEditor') : t('optionsEditorEditing', name);
    $('#rule-save-status').textContent = '';
    this.lint();
    editor.focus();
  }

  /** Shows what `httpsify check` says about the editor's text. */
  lint(): boolean {
    const xml = $<HTMLTextAreaElement>('#rule-editor').value;
    const list = $('#rule-diagnostics');
    if (xml.trim() === '') {
      list.replaceChildren();
      return false;
    }
    const { diagnostics } = lintRulesetSource(xml, 'user-rule.xml');
    list.replaceChildren(
      ...(diagnostics.length === 0
        ? [h('li', { class: 'ok' }, t('optionsEditorNoProblems'))]
        : diagnostics.map((d) => ruleProblemItem(d))),
    );
    return !diagnostics.some((d) => d.severity === 'error');
  }

  private async save(): Promise<void> {
    const status = $('#rule-save-status');
    if (!this.lint()) {
      status.className = 'error';
      status.textContent = t('optionsEditorHasErrors');
      return;
    }
    const result = await background.request<SaveResult>({
      type: 'userRuleSave',
      xml: $<HTMLTextAreaElement>('#rule-editor').value,
      replacing: this.editing,
    });
    if (isError(result) || !result.ok) {
      // The editor's list shows each finding in words; the status line says saving did not happen.
      status.className = 'error';
      status.textContent = t('optionsEditorHasErrors');
      const errors = isError(result)
        ? [{ severity: 'error', code: 'engine', message: result.error, line: 1, column: 1 }]
        : result.errors;
      $('#rule-diagnostics').replaceChildren(...errors.map((d) => ruleProblemItem(d)));
      return;
    }
    status.className = 'ok';
    status.textContent = t('optionsRuleSaved');
    if (result.settings) {
      const saved = result.settings.userRules.find(
        (r) => r.xml === $<HTMLTextAreaElement>('#rule-editor').value,
      );
      this.editing = saved?.name;
      this.onChange(result.settings);
    }
  }
}
