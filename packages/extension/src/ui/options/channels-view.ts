import type { ChannelAddResult, ChannelRow } from '../../protocol/ui-protocol.js';
import type { Settings } from '../../settings/schema.js';
import { background, isError } from '../shared/client.js';
import { $, h } from '../shared/dom.js';
import {
  channelAddProblem,
  channelBrowserProblem,
  channelCheckProblem,
  channelPill,
  CHECKING_PILL,
  type ChannelPill,
} from '../shared/channel-problem.js';
import { t, tCount } from '../shared/i18n.js';
import { details, problemItem } from '../shared/problem.js';

/** A date and time as people read it: no seconds (the exact instant stays in `datetime`). */
export function shortDateTime(date: Date): string {
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** Unix seconds as the reader's local date and time, with the exact instant in `datetime`. */
function time(seconds: number): HTMLTimeElement {
  const date = new Date(seconds * 1000);
  return h('time', { datetime: date.toISOString(), title: String(seconds) }, shortDateTime(date));
}

/** The channel's one status, in a pill beside its name. */
function pill({ key, tone }: ChannelPill): HTMLElement {
  return h('span', { class: `pill ${tone} channel-pill`, dataset: { tone } }, t(key));
}

function field(label: string, ...value: (Node | string)[]): HTMLElement[] {
  return [h('dt', {}, label), h('dd', {}, ...value)];
}

/**
 * One channel's problems, each a sentence with its fix and the raw text under "Details": a
 * failed check, rules too old, rules no longer trusted, this browser's limits, unreadable state.
 */
function channelProblems(row: ChannelRow): HTMLLIElement[] {
  const items: HTMLLIElement[] = [];
  const item = (cls: string, sentence: string, raw: string) => {
    const li = problemItem(sentence, raw);
    li.classList.add(cls);
    items.push(li);
  };
  const error = row.lastCheck?.result === 'failed' ? row.lastCheck.error : undefined;
  // "The rules you had stay in use" only when some are.
  if (error !== undefined)
    item(
      'channel-error',
      row.installed === null
        ? t(channelCheckProblem(error.code))
        : `${t(channelCheckProblem(error.code))} ${t('channelProblemKeep')}`,
      `[${error.code}] ${error.message}`,
    );
  if (row.installed !== null && row.stale)
    item(
      'channel-stale',
      tCount('optionsChannelStaleValue', row.maxAgeDays, String(row.maxAgeDays)),
      '',
    );
  if (row.notInUse !== null)
    item(
      'channel-not-in-use',
      t(
        row.notInUse.reason === 'damaged' ? 'channelDamagedValue' : 'optionsChannelNotAppliedValue',
      ),
      row.notInUse.detail,
    );
  if (row.platformProblem !== null)
    item('channel-problem', t(channelBrowserProblem(row.platformProblem)), row.platformProblem);
  if (row.storageProblem !== null)
    item('channel-storage', t('channelStorageProblem'), row.storageProblem);
  return items;
}

/** One channel's facts: where it comes from, what is installed, when it was and will be checked. */
function channelDetails(row: ChannelRow, now: number): HTMLElement {
  const fields: HTMLElement[] = [
    ...field(t('optionsChannelSource'), row.urlPrefix),
    ...field(
      t('optionsChannelScope'),
      row.scope === '' ? t('optionsChannelScopeAll') : h('code', {}, row.scope),
    ),
  ];
  if (row.replacesDefaults) fields.push(...field(t('optionsChannelReplacesDefaults'), '✓'));
  const installed = row.installed;
  fields.push(
    ...field(
      t('optionsChannelInstalled'),
      installed === null
        ? t(row.notInUse === null ? 'optionsChannelNotInstalled' : 'optionsChannelNoneInUse')
        : h(
            'span',
            { class: 'channel-installed' },
            time(installed.timestamp),
            ` · ${tCount('optionsChannelInstalledValue', installed.rulesetCount, [String(installed.rulesetCount), shortDateTime(new Date(installed.installedAt * 1000))])}`,
          ),
    ),
  );
  // Only the date: how the check went is the pill's to say, once.
  const last = row.lastCheck;
  fields.push(
    ...field(
      t('optionsChannelLastCheck'),
      last === null
        ? t('optionsChannelNever')
        : h('span', { class: `channel-result ${last.result}` }, time(last.at)),
    ),
  );
  fields.push(
    ...field(
      t('optionsChannelNextCheck'),
      row.checking
        ? t('optionsChannelChecking')
        : row.nextCheckAt <= now
          ? t('optionsChannelNextCheckDue')
          : time(row.nextCheckAt),
    ),
  );
  return h('dl', {}, ...fields);
}

/** "Update channels": add by pasting a definition, remove after confirming, check now, and each channel's state. */
export class ChannelsView {
  /** The pasted definition waiting for the user's confirmation. */
  private pendingJson: string | null = null;

  constructor(private readonly onChange: (s: Settings) => void) {
    $('#channel-add').addEventListener('click', () => void this.add());
    $<HTMLInputElement>('#channel-confirm-trust').addEventListener('change', (e) => {
      $<HTMLButtonElement>('#channel-confirm-add').disabled = !(e.target as HTMLInputElement)
        .checked;
    });
    $('#channel-confirm-add').addEventListener('click', () => void this.confirmAdd());
    $('#channel-confirm-cancel').addEventListener('click', () => this.closeConfirm());
    $('#channel-check-all').addEventListener('click', () => void this.check(undefined));
  }

  async load(): Promise<void> {
    const rows = await background.request<ChannelRow[] | { error: string }>({
      type: 'channelStatus',
    });
    if (!isError(rows)) this.render(rows);
  }

  render(rows: ChannelRow[]): void {
    const now = Date.now() / 1000;
    $('#no-channels').hidden = rows.length > 0;
    $('#channel-check-all').hidden = rows.length === 0;
    $('#channel-list').replaceChildren(
      ...rows.map((row) =>
        h(
          'li',
          { class: 'channel', dataset: { name: row.name } },
          h('div', { class: 'channel-head' }, h('h3', {}, row.name), pill(channelPill(row))),
          h('ul', { class: 'plain problem-list channel-problems' }, ...channelProblems(row)),
          channelDetails(row, now),
          h(
            'div',
            { class: 'toolbar' },
            h('button', {
              type: 'button',
              class: 'channel-check',
              textContent: t('optionsChannelCheckNow'),
              'aria-label': t('optionsChannelCheckNamed', row.name),
              disabled: row.checking,
              onclick: () => void this.check(row.name),
            }),
            h('button', {
              type: 'button',
              class: 'danger channel-remove',
              textContent: t('commonRemove'),
              'aria-label': t('commonRemoveNamed', row.name),
              onclick: () => void this.remove(row.name),
            }),
          ),
        ),
      ),
    );
  }

  private async add(): Promise<void> {
    const input = $<HTMLTextAreaElement>('#channel-definition');
    const error = $('#channel-add-error');
    const button = $<HTMLButtonElement>('#channel-add');
    button.disabled = true;
    $('#channel-check-status').textContent = t('optionsChannelChecking');
    try {
      // Refusals come back as { ok: false, error }, a failure of the background as { error }.
      // An address instead of a definition: the background fetches it (https only).
      const text = input.value.trim();
      if (!/^https?:\/\/\S+$/i.test(text)) return await this.preview(input.value);
      const result = await background.request<ChannelAddResult | { ok?: undefined; error: string }>(
        { type: 'channelAddUrl', url: text },
      );
      error.hidden = result.ok === true;
      if (result.ok !== true) {
        error.replaceChildren(
          h('span', {}, t(channelAddProblem(result.error))),
          details(result.error),
        );
        return;
      }
      input.value = '';
      this.render(result.channels);
      this.onChange(result.settings);
    } finally {
      button.disabled = false;
      $('#channel-check-status').textContent = '';
    }
  }

  /**
   * A pasted definition is checked and shown before it is added, and added only once the user
   * ticks "I trust … from …": the same confirmation a channel from a settings file gets.
   */
  private async preview(json: string): Promise<void> {
    const error = $('#channel-add-error');
    type Preview =
      | { ok: true; name: string; urlPrefix: string; scope: string; replacesDefaults: boolean }
      | { ok?: false; error: string };
    const p = await background.request<Preview>({ type: 'channelPreview', json });
    error.hidden = p.ok === true;
    if (p.ok !== true) {
      error.replaceChildren(h('span', {}, t(channelAddProblem(p.error))), details(p.error));
      return;
    }
    this.pendingJson = json;
    $('#channel-confirm-title').textContent = t('optionsChannelConfirmTitle', p.name);
    $('#channel-confirm-fields').replaceChildren(
      ...field(t('optionsChannelSource'), p.urlPrefix),
      ...field(
        t('optionsChannelScope'),
        p.scope === '' ? t('optionsChannelScopeAll') : h('code', {}, p.scope),
      ),
      ...(p.replacesDefaults
        ? field(t('optionsChannelReplacesDefaults'), t('optionsChannelConfirmReplaces'))
        : []),
    );
    $('#channel-confirm-trust-text').textContent = t('optionsImportTrustChannel', [
      p.name,
      p.urlPrefix,
    ]);
    $<HTMLInputElement>('#channel-confirm-trust').checked = false;
    $<HTMLButtonElement>('#channel-confirm-add').disabled = true;
    $('#channel-confirm').hidden = false;
    $('#channel-confirm-title').focus();
  }

  private closeConfirm(): void {
    this.pendingJson = null;
    $('#channel-confirm').hidden = true;
  }

  private async confirmAdd(): Promise<void> {
    const json = this.pendingJson;
    if (json === null || !$<HTMLInputElement>('#channel-confirm-trust').checked) return;
    const error = $('#channel-add-error');
    const result = await background.request<ChannelAddResult | { ok?: undefined; error: string }>({
      type: 'channelAdd',
      json,
    });
    this.closeConfirm();
    error.hidden = result.ok === true;
    if (result.ok !== true) {
      error.replaceChildren(
        h('span', {}, t(channelAddProblem(result.error))),
        details(result.error),
      );
      return;
    }
    $<HTMLTextAreaElement>('#channel-definition').value = '';
    this.render(result.channels);
    this.onChange(result.settings);
  }

  private async remove(name: string): Promise<void> {
    if (!confirm(t('optionsChannelRemoveConfirm', name))) return;
    const rows = await background.request<ChannelRow[] | { error: string }>({
      type: 'channelRemove',
      name,
    });
    if (!isError(rows)) this.render(rows);
    this.onChange(await background.request<Settings>({ type: 'settings' }));
  }

  private async check(name: string | undefined): Promise<void> {
    const status = $('#channel-check-status');
    status.textContent = t('optionsChannelChecking');
    for (const b of Array.from(
      document.querySelectorAll<HTMLButtonElement>('.channel-check, #channel-check-all'),
    ))
      b.disabled = true;
    // The pill of each channel being checked says so until the answer replaces the list.
    for (const li of Array.from(document.querySelectorAll<HTMLElement>('#channel-list .channel'))) {
      if (name !== undefined && li.dataset.name !== name) continue;
      const p = li.querySelector('.channel-pill');
      p?.replaceWith(pill(CHECKING_PILL));
    }
    const rows = await background.request<ChannelRow[] | { error: string }>({
      type: 'channelCheck',
      name,
    });
    if (isError(rows))
      status.replaceChildren(h('span', {}, t('channelProblemCheckFailed')), details(rows.error));
    else status.textContent = '';
    if (!isError(rows)) this.render(rows);
    $<HTMLButtonElement>('#channel-check-all').disabled = false;
  }
}
