import type { SaveResult } from '../../protocol/ui-protocol.js';
import type { Settings } from '../../settings/schema.js';
import { simpleRuleXml } from '../../settings/user-rules.js';
import { background, isError } from '../shared/client.js';
import { $, h } from '../shared/dom.js';
import { t } from '../shared/i18n.js';
import { problemItem } from '../shared/problem.js';
import { formRule, isSiteName } from '../shared/rule-form.js';
import { ruleProblemItem } from './user-rules-view.js';

/**
 * "Write a rule…": the popup's plain form (which site, where it goes) on the options page, with
 * ruleset XML one step further, under "Advanced".
 */
export class RuleFormView {
  constructor(
    private readonly onChange: (s: Settings) => void,
    private readonly openXml: (xml: string) => void,
  ) {
    const form = $<HTMLFormElement>('#rule-form');
    $('#user-rule-new').addEventListener('click', () => this.open());
    $('#rule-form-cancel').addEventListener('click', () => (form.hidden = true));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.save();
    });
    $('#rule-form-xml').addEventListener('click', () => {
      const site = $<HTMLInputElement>('#rule-form-site').value;
      const rule = formRule(
        site.trim() === '' ? 'example.com' : site,
        $<HTMLInputElement>('#rule-form-to').value,
      );
      form.hidden = true;
      this.openXml(simpleRuleXml(rule));
    });
  }

  open(): void {
    const form = $<HTMLFormElement>('#rule-form');
    form.hidden = false;
    $('#rule-form-errors').replaceChildren();
    $('#rule-form-status').textContent = '';
    $<HTMLInputElement>('#rule-form-site').focus();
  }

  private async save(): Promise<void> {
    const typed = $<HTMLInputElement>('#rule-form-site').value.trim();
    const to = $<HTMLInputElement>('#rule-form-to').value.trim();
    const list = $('#rule-form-errors');
    const status = $('#rule-form-status');
    status.textContent = '';
    if (!isSiteName(typed))
      return void list.replaceChildren(problemItem(t('problemSiteName', typed), ''));
    const rule = formRule(typed, to);
    if (rule.toProblem)
      return void list.replaceChildren(problemItem(t('optionsRuleFormToInvalid', to), ''));
    const result = await background.request<SaveResult>({
      type: 'userRuleSave',
      xml: simpleRuleXml(rule),
    });
    if (isError(result) || !result.ok) {
      const errors = isError(result)
        ? [{ severity: 'error', code: 'engine', message: result.error, line: 1, column: 1 }]
        : result.errors;
      list.replaceChildren(...errors.map((d) => ruleProblemItem(d)));
      return;
    }
    list.replaceChildren();
    status.className = 'ok';
    status.replaceChildren(h('span', {}, t('optionsRuleFormSaved', rule.host)));
    $<HTMLInputElement>('#rule-form-site').value = '';
    $<HTMLInputElement>('#rule-form-to').value = '';
    if (result.settings) this.onChange(result.settings);
  }
}
