import type { PopupState, RulesetRow, SaveResult } from '../../protocol/ui-protocol.js';
import { simpleRuleXml, typedHost, type SimpleRule } from '../../settings/user-rules.js';
import { ext } from '../../platform/browser-api.js';
import { background, isError } from '../shared/client.js';
import { $, h, hostNode } from '../shared/dom.js';
import { localize, t, tCount } from '../shared/i18n.js';
import { plainProblem, problemItem } from '../shared/problem.js';
import { formRule, isSiteName } from '../shared/rule-form.js';
import { MODE_HINT, modeChanges, reloadUrl, siteMode, type SiteMode } from './site-mode.js';
import { statusText } from './status-text.js';

/** The tab this popup is about: `?tabId=` (tests, tab-opened popups) or the active tab. */
async function currentTab(): Promise<chrome.tabs.Tab | undefined> {
  const param = new URLSearchParams(location.search).get('tabId');
  if (param !== null) return ext.tabs.get(Number(param)).catch(() => undefined);
  const [tab] = await ext.tabs.query({ active: true, lastFocusedWindow: true });
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
  // Redraw only on change: a redraw replaces the switches and would move keyboard focus.
  const key = JSON.stringify(state);
  if (key === shown) return;
  shown = key;
  render();
}

function render(): void {
  const { settings, site, status } = state;
  $<HTMLInputElement>('#global-enabled').checked = settings.globalEnabled;
  $<HTMLInputElement>('#https-first').checked = settings.httpsFirst;
  document.body.classList.toggle('off', !settings.globalEnabled);
  // Without a web page there is nothing to show but the status line.
  document.body.classList.toggle('no-page', site === null);
  document.body.dataset.status = status.kind;

  const text = statusText(status);
  const box = $('#status');
  box.className = `status ${text.tone}`;
  $('#status-title').textContent = text.title;
  $('#status-detail').textContent = text.detail;
  $('#status-detail').hidden = text.detail === '';
  const action = $<HTMLButtonElement>('#status-action');
  action.hidden = text.action === undefined;
  action.textContent = text.action ?? '';
  action.dataset.act = text.act ?? 'retry';
  const settingsLink = $<HTMLButtonElement>('#status-settings');
  settingsLink.hidden = text.settings === undefined;
  settingsLink.textContent = text.settings?.label ?? '';
  settingsLink.dataset.url = text.settings?.url ?? '';

  const siteDisabled = site?.disabledBy != null;
  if (site !== null) {
    $('#site-host').replaceChildren(hostNode(site.hostWithPort));
    $('#upgraded-count').textContent =
      state.upgraded === 0 ? '' : tCount('popupUpgraded', state.upgraded, String(state.upgraded));
    const mode = siteMode(site);
    $<HTMLInputElement>(`#site-mode-${mode}`).checked = true;
    $('#site-mode-hint').textContent = t(MODE_HINT[mode]);
    $('#site-help-rules').hidden = mode !== 'everything';
    // Off already: the help would only repeat the choice (the status line names any browser step).
    $('#site-help').hidden = mode === 'off';
  }
  // A disabled site shows only how to enable it again (as HTTPS Everywhere did).
  const stable = state.rulesets.filter((r) => r.defaultActive);
  const experimental = state.rulesets.filter((r) => !r.defaultActive);
  $('#rules').hidden = siteDisabled || state.rulesets.length === 0;
  $('#stable-rules').hidden = stable.length === 0;
  $('#stable-rules').replaceChildren(...stable.map(ruleRow));
  $('#experimental-group').hidden = experimental.length === 0;
  $('#experimental-rules').replaceChildren(...experimental.map(ruleRow));
  $('#add-rule').hidden = siteDisabled || site === null;
  $('#reset-defaults').hidden = state.overrideCount === 0;

  if (site !== null) {
    const host = $<HTMLInputElement>('#rule-host');
    if (host.value === '') {
      host.value = hostOf(site.hostWithPort).host;
      fillAdvanced();
    }
  }
}

/** Puts the site in `mode` and loads the page again in it (see reloadUrl). */
async function setSiteMode(mode: SiteMode): Promise<void> {
  const site = state.site;
  if (site === null) return;
  const changes = modeChanges(site, mode);
  if (changes.length === 0) return;
  for (const change of changes) await background.request(change);
  const url = reloadUrl(site, state.status.kind, mode);
  if (url !== undefined) await openOverHttp(url);
  else await reloadTab();
  await load();
}

/** The page's http:// address, when httpsify or the browser moved it to HTTPS. */
function httpAddressIfMoved(): string | undefined {
  const kind = state.status.kind;
  const moved =
    kind === 'https-by-ruleset' || kind === 'https-by-upgrade' || kind === 'https-by-browser';
  return moved && state.site?.scheme === 'https'
    ? state.site.url.replace(/^https:/, 'http:')
    : undefined;
}

/**
 * Loads the tab at `url` (http://) after the user asked for HTTP: the background goes past the
 * browser's own upgrade where the browser allows it (status/open-over-http.ts).
 */
async function openOverHttp(url: string): Promise<void> {
  if (tab?.id === undefined) return;
  const result = await background.request<{ ok: boolean }>({
    type: 'openOverHttp',
    tabId: tab.id,
    url,
  });
  if (isError(result) || !result.ok) await reloadTab(url);
}

/** Host and port of "host:port" (IPv6 literals keep their brackets). */
function hostOf(hostWithPort: string): { host: string; port: string } {
  const port = /:(\d+)$/.exec(hostWithPort)?.[1] ?? '';
  return { host: port === '' ? hostWithPort : hostWithPort.slice(0, -port.length - 1), port };
}

/** The rule "Always use HTTPS" makes for the typed host: the page's port too when it is the page's host. */
function simpleRule(): SimpleRule {
  const input = $<HTMLInputElement>('#rule-host').value;
  const page = state.site === null ? null : hostOf(state.site.hostWithPort);
  return formRule(input, '', page !== null && page.host === typedHost(input) ? page.port : '');
}

function fillAdvanced(): void {
  const rule = simpleRule();
  $<HTMLInputElement>('#rule-from').value = rule.from;
  $<HTMLInputElement>('#rule-to').value = rule.to;
}

function ruleRow(r: RulesetRow): HTMLElement {
  const box = h('input', {
    type: 'checkbox',
    role: 'switch',
    class: 'switch',
    checked: r.active,
    dataset: { name: r.name },
  });
  box.addEventListener('change', () => void busyWhile(() => toggleRuleset(r, box.checked))());
  return h(
    'label',
    { title: r.note ?? t('popupStableTooltip'), class: 'switch-row rule' },
    h(
      'span',
      { class: 'text' },
      h('span', { class: 'name' }, r.name),
      r.user ? h('span', { class: 'tag' }, t('popupUserRuleBadge')) : null,
    ),
    box,
  );
}

async function toggleRuleset(r: RulesetRow, active: boolean): Promise<void> {
  // Switched off on a page it moved to HTTPS: load the address asked for, so the page shows
  // what the rest of httpsify (or the browser) does without it.
  const back = active ? undefined : httpAddressIfMoved();
  await background.request({ type: 'setRuleset', name: r.name, active });
  if (back !== undefined) await openOverHttp(back);
  else await reloadTab();
  await load();
}

async function reloadTab(url?: string): Promise<void> {
  if (tab?.id === undefined) return;
  if (url !== undefined) await ext.tabs.update(tab.id, { url }).catch(() => undefined);
  else await ext.tabs.reload(tab.id).catch(() => undefined);
}

async function saveRule(rule: { host: string; from: string; to: string }): Promise<void> {
  const list = $('#add-rule-errors');
  const typed = $<HTMLInputElement>('#rule-host').value.trim();
  const result = await background.request<SaveResult>({
    type: 'userRuleSave',
    xml: simpleRuleXml(rule),
  });
  if (isError(result) || !result.ok) {
    const errors = isError(result) ? [{ message: result.error, severity: 'error' }] : result.errors;
    // Not a site name at all: one sentence says so and how to fix it; the checks' own words under "Details".
    const sentence = (m: string) =>
      isSiteName(typed) ? plainProblem(m, 'problemRule') : t('problemSiteName', typed);
    list.replaceChildren(
      ...errors.map((d) => problemItem(sentence(d.message), d.message, d.severity)),
    );
    $('#add-rule-saved').hidden = true;
    return;
  }
  list.replaceChildren();
  $('#add-rule-saved').hidden = false;
  await reloadTab();
  await load();
}

function on(selector: string, event: string, fn: (e: Event) => Promise<void>): void {
  $(selector).addEventListener(event, (e) => void busyWhile(() => fn(e))());
}

async function init(): Promise<void> {
  localize();
  tab = await currentTab();
  await load();

  on('#global-enabled', 'change', async (e) => {
    const value = (e.target as HTMLInputElement).checked;
    const back = value ? undefined : httpAddressIfMoved();
    await background.request({ type: 'setFlag', flag: 'globalEnabled', value });
    if (back !== undefined) await openOverHttp(back);
    else await reloadTab();
    await load();
  });
  on('#https-first', 'change', async (e) => {
    const value = (e.target as HTMLInputElement).checked;
    await background.request({ type: 'setFlag', flag: 'httpsFirst', value });
    // Turning it on should take effect on the page in front of the user.
    if (value) await reloadTab();
    await load();
  });
  on('#site-mode', 'change', async (e) =>
    setSiteMode((e.target as HTMLInputElement).value as SiteMode),
  );
  keyboardActivatesOnly($('#site-mode'));
  $('#status-settings').addEventListener('click', (e) => {
    const url = (e.target as HTMLElement).dataset.url;
    if (url) void ext.tabs.create({ url });
  });
  on('#site-help-rules', 'click', async () => setSiteMode('rules'));
  on('#site-help-off', 'click', async () => setSiteMode('off'));
  on('#status-action', 'click', async (e) => {
    const act = (e.target as HTMLElement).dataset.act;
    if (act === 'open-http') {
      if (state.site !== null) await openOverHttp(state.site.url.replace(/^https:/, 'http:'));
      await load();
      return;
    }
    if (act === 'turn-on' || act === 'https-first-on') {
      await background.request({
        type: 'setFlag',
        flag: act === 'turn-on' ? 'globalEnabled' : 'httpsFirst',
        value: true,
      });
      await reloadTab();
      await load();
      return;
    }
    const result = await background.request<{ ok: boolean; url?: string }>({
      type: 'pageRetry',
      tabId: tab?.id ?? -1,
    });
    if (!isError(result) && result.ok) await reloadTab(result.url);
    await load();
  });
  on('#simple-rule-form', 'submit', async (e) => {
    e.preventDefault();
    await saveRule(simpleRule());
  });
  $('#rule-host').addEventListener('input', fillAdvanced);
  on('#add-rule-form', 'submit', async (e) => {
    e.preventDefault();
    await saveRule({
      host: $<HTMLInputElement>('#rule-host').value.trim(),
      from: $<HTMLInputElement>('#rule-from').value,
      to: $<HTMLInputElement>('#rule-to').value,
    });
  });
  const dialog = $<HTMLDialogElement>('#confirm-reset');
  $('#reset-defaults').addEventListener('click', () => {
    // Escape closes without setting a value: clear the last one.
    dialog.returnValue = '';
    dialog.showModal();
  });
  dialog.addEventListener(
    'close',
    () =>
      void busyWhile(async () => {
        if (dialog.returnValue !== 'ok') return;
        await background.request({ type: 'resetRulesets' });
        await reloadTab();
        await load();
      })(),
  );
  $('#open-options').addEventListener('click', () => void ext.runtime.openOptionsPage());
  document.body.dataset.ready = 'true';
  // The page keeps loading while the popup is open: keep the list and counts current.
  setInterval(() => {
    if (busy === 0) void load();
  }, 1000);
}

/**
 * A radio group whose arrow keys move focus without choosing: each choice reloads the page, so
 * a keyboard user passing "Rules only" on the way to "Off" must not apply it. Space (native) and
 * Enter choose the focused option; a click chooses as usual.
 */
function keyboardActivatesOnly(group: HTMLElement): void {
  group.addEventListener('keydown', (e) => {
    const radios = Array.from(group.querySelectorAll<HTMLInputElement>('input[type="radio"]'));
    const at = radios.indexOf(e.target as HTMLInputElement);
    if (at < 0) return;
    const step =
      e.key === 'ArrowRight' || e.key === 'ArrowDown'
        ? 1
        : e.key === 'ArrowLeft' || e.key === 'ArrowUp'
          ? -1
          : 0;
    if (step !== 0) {
      e.preventDefault();
      radios[(at + step + radios.length) % radios.length]!.focus();
    } else if (e.key === 'Enter' && !radios[at]!.checked) {
      e.preventDefault();
      radios[at]!.click();
    }
  });
}

void init();
