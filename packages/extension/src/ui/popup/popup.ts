import type { PopupState, RulesetRow, SaveResult } from '../../background/ui-protocol.js';
import { defaultSimpleRule, simpleRuleXml } from '../../settings/user-rules.js';
import { api, background, isError } from '../shared/client.js';
import { $, h } from '../shared/dom.js';
import { localize, t } from '../shared/i18n.js';

/** The tab this popup is about: `?tabId=` (tests, tab-opened popups) or the active tab. */
async function currentTab(): Promise<chrome.tabs.Tab | undefined> {
  const param = new URLSearchParams(location.search).get('tabId');
  if (param !== null) return api.tabs.get(Number(param));
  const [tab] = await api.tabs.query({ active: true, lastFocusedWindow: true });
  return tab;
}

let tab: chrome.tabs.Tab | undefined;
let state: PopupState;

let shown = '';
/** Changes in flight: the periodic refresh waits, or it could show the state from before them. */
let busy = 0;

function busyWhile(fn: () => Promise<void>): () => Promise<void> {
  return async () => {
    busy++;
    try {
      await fn();
    } finally {
      busy--;
    }
  };
}

async function load(): Promise<void> {
  state = await background.request<PopupState>({ type: 'popup', tabId: tab?.id ?? -1 });
  // Redraw only on change: a redraw replaces the checkboxes and would move keyboard focus.
  const key = JSON.stringify(state);
  if (key === shown) return;
  shown = key;
  render();
}

function render(): void {
  const { settings, site } = state;
  $<HTMLInputElement>('#global-enabled').checked = settings.globalEnabled;
  $<HTMLInputElement>('#https-first').checked = settings.httpsFirst;
  document.body.classList.toggle('disabled', !settings.globalEnabled);
  $('#off-note').hidden = settings.globalEnabled;

  const siteSection = $('#site');
  siteSection.hidden = site === null;
  const siteDisabled = site?.disabledBy != null;
  if (site !== null) {
    $('#site-host').textContent = site.hostWithPort;
    $('#upgraded-count').textContent = t('popupUpgradedCount', String(state.upgraded));
    $('#disable-site').hidden = siteDisabled;
    $('#enable-site').hidden = !siteDisabled;
    const note = $('#site-disabled-note');
    note.hidden = !siteDisabled;
    if (siteDisabled) note.textContent = t('popupDisabledBy', site.disabledBy as string);
    // "Always allow HTTP" from the HTTPS-first fallback page: visible (and undoable) only while
    // HTTPS-first is on, the only time it changes anything.
    const httpAllowed = !siteDisabled && settings.httpsFirst && site.httpAllowedBy !== null;
    const allowedNote = $('#site-http-allowed-note');
    allowedNote.hidden = !httpAllowed;
    $('#disallow-http').hidden = !httpAllowed;
    if (httpAllowed) allowedNote.textContent = t('popupHttpAllowedBy', site.httpAllowedBy as string);
  }
  // A disabled site shows only how to enable it again (as HTTPS Everywhere did).
  $('#rules').hidden = siteDisabled;
  $('#add-rule').hidden = siteDisabled || site === null;
  $('#reset-defaults').parentElement!.hidden = siteDisabled;

  const stable = state.rulesets.filter((r) => r.defaultActive);
  const experimental = state.rulesets.filter((r) => !r.defaultActive);
  $('#stable-rules').replaceChildren(...stable.map(ruleRow));
  $('#experimental-rules').replaceChildren(...experimental.map(ruleRow));
  $('#no-rules').hidden = state.rulesets.length > 0;

  if (site !== null) {
    const host = $<HTMLInputElement>('#rule-host');
    if (host.value === '') {
      const port = /:(\d+)$/.exec(site.hostWithPort)?.[1] ?? '';
      const rule = defaultSimpleRule(port === '' ? site.hostWithPort : site.hostWithPort.slice(0, -port.length - 1), port);
      host.value = rule.host;
      $<HTMLInputElement>('#rule-from').value = rule.from;
      $<HTMLInputElement>('#rule-to').value = rule.to;
    }
  }
}

function ruleRow(r: RulesetRow): HTMLElement {
  const box = h('input', { type: 'checkbox', checked: r.active, dataset: { name: r.name } });
  box.addEventListener('change', () => void busyWhile(() => toggleRuleset(r, box.checked))());
  return h(
    'label',
    { title: r.note ?? t('popupStableTooltip'), class: 'rule' },
    box,
    h('span', {}, r.name),
    r.user ? h('span', { class: 'user-badge' }, t('popupUserRuleBadge')) : null,
  );
}

async function toggleRuleset(r: RulesetRow, active: boolean): Promise<void> {
  await background.request({ type: 'setRuleset', name: r.name, active });
  await reloadTab();
  await load();
}

async function reloadTab(): Promise<void> {
  if (tab?.id !== undefined) await api.tabs.reload(tab.id).catch(() => undefined);
}

async function init(): Promise<void> {
  localize();
  tab = await currentTab();
  await load();

  $<HTMLInputElement>('#global-enabled').addEventListener('change', (e) => void busyWhile(async () => {
    await background.request({ type: 'setFlag', flag: 'globalEnabled', value: (e.target as HTMLInputElement).checked });
    await reloadTab();
    await load();
  })());
  $<HTMLInputElement>('#https-first').addEventListener('change', (e) => void busyWhile(async () => {
    const on = (e.target as HTMLInputElement).checked;
    await background.request({ type: 'setFlag', flag: 'httpsFirst', value: on });
    // Turning it on should take effect on the page in front of the user.
    if (on) await reloadTab();
    await load();
  })());
  $('#disable-site').addEventListener('click', () => void busyWhile(async () => {
    if (state.site === null) return;
    await background.request({ type: 'siteAdd', list: 'disabledSites', entry: state.site.hostWithPort });
    await reloadTab();
    await load();
  })());
  $('#enable-site').addEventListener('click', () => void busyWhile(async () => {
    if (state.site?.disabledBy == null) return;
    await background.request({ type: 'siteRemove', list: 'disabledSites', entry: state.site.disabledBy });
    await reloadTab();
    await load();
  })());
  $('#disallow-http').addEventListener('click', () => void busyWhile(async () => {
    if (state.site?.httpAllowedBy == null) return;
    await background.request({ type: 'siteRemove', list: 'httpAllowedSites', entry: state.site.httpAllowedBy });
    await reloadTab();
    await load();
  })());
  $('#add-rule-form').addEventListener('submit', (e) => void busyWhile(async () => {
    e.preventDefault();
    const rule = { host: $<HTMLInputElement>('#rule-host').value.trim(), from: $<HTMLInputElement>('#rule-from').value, to: $<HTMLInputElement>('#rule-to').value };
    const result = await background.request<SaveResult>({ type: 'userRuleSave', xml: simpleRuleXml(rule) });
    const list = $('#add-rule-errors');
    if (isError(result) || !result.ok) {
      const errors = isError(result) ? [{ message: result.error, line: 0, column: 0, severity: 'error' }] : result.errors;
      list.replaceChildren(...errors.map((d) => h('li', { class: d.severity }, d.message)));
      $('#add-rule-saved').hidden = true;
      return;
    }
    list.replaceChildren();
    $('#add-rule-saved').hidden = false;
    await reloadTab();
    await load();
  })());
  const dialog = $<HTMLDialogElement>('#confirm-reset');
  $('#reset-defaults').addEventListener('click', () => dialog.showModal());
  dialog.addEventListener('close', () => void busyWhile(async () => {
    if (dialog.returnValue !== 'ok') return;
    await background.request({ type: 'resetRulesets' });
    await reloadTab();
    await load();
  })());
  $('#open-options').addEventListener('click', () => void api.runtime.openOptionsPage());
  document.body.dataset.ready = 'true';
  // The page keeps loading while the popup is open: keep the list and counts current.
  setInterval(() => {
    if (busy === 0) void load();
  }, 1000);
}

void init();
