import type { ImportApplyResult, ImportPreview } from '../../protocol/ui-protocol.js';
import type { ImportChange, UserRuleToConfirm } from '../../settings/import-plan.js';
import type { RuleSendsTo, RuleTarget } from '../../settings/user-rule-summary.js';
import type { Settings } from '../../settings/schema.js';
import { background, isError } from '../shared/client.js';
import { $, download, h } from '../shared/dom.js';
import { plainProblem, problemItem } from '../shared/problem.js';
import { t } from '../shared/i18n.js';

const LABELS: Record<ImportChange['key'], string> = {
  globalEnabled: 'popupGlobalEnabled',
  httpsFirst: 'popupHttpsFirst',
  mixedContent: 'optionsMixedContent',
  showBadge: 'optionsShowBadge',
  disabledSites: 'optionsDisabledSites',
  httpAllowedSites: 'optionsHttpAllowedSites',
  userRules: 'optionsUserRules',
  channels: 'optionsChannels',
  rulesetOverrides: 'optionsImportRulesetSwitches',
};

/** One line of the preview, in words: "HTTPS-first: off → on", "Your rules: adds A, B". */
function describeChange(c: ImportChange): HTMLElement {
  const label = t(LABELS[c.key]);
  if (c.kind === 'flag')
    return h(
      'li',
      { dataset: { key: c.key } },
      h('strong', {}, label),
      `: ${t('optionsImportFromTo', [t(c.from ? 'commonOn' : 'commonOff'), t(c.to ? 'commonOn' : 'commonOff')])}`,
    );
  const parts: string[] = [];
  const names = (list: string[]) => list.join(', ');
  if (c.kind === 'overrides') {
    const on = c.set.filter((s) => s.on).map((s) => s.name);
    const off = c.set.filter((s) => !s.on).map((s) => s.name);
    if (on.length > 0) parts.push(t('optionsImportTurnsOn', names(on)));
    if (off.length > 0) parts.push(t('optionsImportTurnsOff', names(off)));
    if (c.cleared.length > 0) parts.push(t('optionsImportBackToDefault', names(c.cleared)));
  } else {
    if (c.added.length > 0) parts.push(t('optionsImportAdds', names(c.added)));
    if (c.removed.length > 0) parts.push(t('optionsImportRemoves', names(c.removed)));
    if (c.changed.length > 0) parts.push(t('optionsImportReplaces', names(c.changed)));
  }
  return h('li', { dataset: { key: c.key } }, h('strong', {}, label), `: ${parts.join('; ')}`);
}

function describeTarget(target: RuleTarget): string {
  if (target.kind === 'host') return target.host;
  if (target.kind === 'subdomains') return t('optionsImportRuleTargetSubdomains', target.domain);
  return t('optionsImportRuleTargetAnyEnding', target.name);
}

/** One line per rule: where it sends visits, with a warning when that may be another site. */
function describeSendsTo(s: RuleSendsTo): HTMLElement {
  const line = (key: string, arg?: string, warn = false) =>
    h('li', { class: warn ? 'error' : undefined }, t(key, arg));
  if (s.kind === 'same') return line('optionsImportRuleSendsSame');
  if (s.kind === 'computed') return line('optionsImportRuleSendsComputed', undefined, true);
  if (s.kind === 'under')
    return s.elsewhere
      ? line('optionsImportRuleSendsUnderElsewhere', s.domain, true)
      : line('optionsImportRuleSendsUnder', s.domain);
  const hosts = s.hosts.join(', ');
  return s.elsewhere
    ? line('optionsImportRuleSendsElsewhere', hosts, true)
    : line('optionsImportRuleSendsHosts', hosts);
}

/** A user rule of the file in plain words, with the box the user ticks to trust it. */
function describeUserRule(rule: UserRuleToConfirm, onChange: () => void): HTMLElement {
  const box = h('input', {
    type: 'checkbox',
    class: 'import-trust-rule',
    dataset: { name: rule.name },
  });
  box.addEventListener('change', onChange);
  return h(
    'li',
    { class: 'import-rule', dataset: { name: rule.name } },
    h('p', {}, t('optionsImportRuleAppliesTo', rule.targets.map(describeTarget).join(', '))),
    h('ul', {}, ...rule.sendsTo.map(describeSendsTo)),
    h(
      'label',
      { class: 'check' },
      box,
      h(
        'span',
        {},
        t('optionsImportTrustRule', rule.name),
        rule.replacing ? ` ${t('optionsImportRuleReplaces')}` : '',
      ),
    ),
  );
}

/**
 * "Backup": export, and an import in two steps. The file is checked whole by the background
 * and its effect shown; nothing changes until the user applies it, and every update channel and
 * every user rule it would add or change (shown in plain words) must be ticked first.
 */
export class BackupView {
  private pending: string | null = null;

  constructor(private readonly onChange: (s: Settings) => void) {
    $('#settings-export').addEventListener('click', async () => {
      const data = await background.request<unknown>({ type: 'exportSettings' });
      download('httpsify-settings.json', `${JSON.stringify(data, null, 2)}\n`, 'application/json');
    });
    $<HTMLInputElement>('#settings-import').addEventListener('change', async (e) => {
      const input = e.target as HTMLInputElement;
      const file = input.files?.[0];
      input.value = '';
      if (file === undefined) return;
      // The background checks the text itself (size, JSON, every value): one door for the file.
      await this.preview(await file.text());
    });
    $('#import-apply').addEventListener('click', () => void this.apply());
    $('#import-cancel').addEventListener('click', () => {
      this.close();
      this.say('muted', t('optionsImportCancelled'));
    });
  }

  private async preview(text: string): Promise<void> {
    const result = await background.request<ImportPreview | { error: string }>({
      type: 'importPreview',
      text,
    });
    if (isError(result) || !result.ok) {
      this.close();
      this.refused(isError(result) ? [result.error] : result.problems);
      return;
    }
    this.pending = text;
    this.say('', '');
    $('#import-changes').replaceChildren(...result.changes.map(describeChange));
    $('#import-nothing').hidden = result.changes.length > 0;
    $('#import-channels').hidden = result.channels.length === 0;
    $('#import-channel-list').replaceChildren(
      ...result.channels.map((c) => {
        const box = h('input', {
          type: 'checkbox',
          class: 'import-trust',
          dataset: { name: c.name },
        });
        box.addEventListener('change', () => this.updateApply());
        return h(
          'li',
          {},
          h(
            'label',
            { class: 'check' },
            box,
            h(
              'span',
              {},
              t('optionsImportTrustChannel', [c.name, c.urlPrefix]),
              c.replacing ? ` ${t('optionsImportChannelReplaces')}` : '',
            ),
          ),
        );
      }),
    );
    $('#import-rules').hidden = result.userRules.length === 0;
    $('#import-rule-list').replaceChildren(
      ...result.userRules.map((r) => describeUserRule(r, () => this.updateApply())),
    );
    $('#import-review').hidden = false;
    this.updateApply();
    $('#import-review-title').focus();
  }

  /** Names ticked in the boxes of `cls` (channels: `import-trust`, user rules: `import-trust-rule`). */
  private trusted(cls = 'import-trust'): string[] {
    return Array.from(document.querySelectorAll<HTMLInputElement>(`.${cls}`))
      .filter((b) => b.checked)
      .map((b) => b.dataset.name as string);
  }

  private updateApply(): void {
    const boxes = document.querySelectorAll<HTMLInputElement>('.import-trust, .import-trust-rule');
    const ticked = this.trusted().length + this.trusted('import-trust-rule').length;
    $<HTMLButtonElement>('#import-apply').disabled =
      ticked < boxes.length || $('#import-changes').childElementCount === 0;
  }

  private async apply(): Promise<void> {
    if (this.pending === null) return;
    const result = await background.request<ImportApplyResult | { error: string }>({
      type: 'importApply',
      text: this.pending,
      confirmedChannels: this.trusted(),
      confirmedUserRules: this.trusted('import-trust-rule'),
    });
    this.close();
    if (isError(result) || !result.ok) {
      this.refused(isError(result) ? [result.error] : result.problems);
      return;
    }
    this.say('ok', t('optionsImportDone'));
    this.onChange(result.settings);
  }

  private close(): void {
    this.pending = null;
    $('#import-review').hidden = true;
  }

  private refused(problems: string[]): void {
    this.say('error', t('optionsImportRefused'));
    $('#settings-import-problems').replaceChildren(
      ...problems.map((p) => problemItem(plainProblem(p), p)),
    );
  }

  private say(cls: string, text: string): void {
    const out = $('#settings-import-result');
    out.className = cls;
    out.textContent = text;
    $('#settings-import-problems').replaceChildren();
  }
}
