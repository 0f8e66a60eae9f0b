import type { PageStatus, PopupState, RulesetRow, SaveResult } from '../../routing/ui-protocol.js';
import { simpleRuleXml, typedHost, type SimpleRule } from '../../settings/user-rules.js';
import { api, background, isError } from '../shared/client.js';
import { $, h, hostNode } from '../shared/dom.js';
import { localize, t, tCount } from '../shared/i18n.js';
import { plainProblem, problemItem } from '../shared/problem.js';
import { formRule, isSiteName } from '../shared/rule-form.js';

/** The tab this popup is about: `?tabId=` (tests, tab-opened popups) or the active tab. */
async function currentTab(): Promise<chrome.tabs.Tab | undefined> {
  const param = new URLSearchParams(location.search).get('tabId');
  if (param !== null) return api.tabs.get(Number(param)).catch(() => undefined);
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
  // Redraw only on change: a redraw replaces the switches and would move keyboard focus.
  const key = JSON.stringify(state);
  if (key === shown) return;
  shown = key;
  render();
}

interface StatusText {
  tone: 'ok' | 'warn' | 'neutral';
  title: string;
  detail: string;
  action?: string;
  /** What the action does: remove the cause (`pageRetry`, the default) or switch something on. */
  act?: 'retry' | 'turn-on' | 'https-first-on';
}

/** The site's state: everything (no entry), rulesets only (HTTP allowed) or off. */
type SiteMode = 'everything' | 'rules' | 'off';

function siteMode(site: NonNullable<PopupState['site']>): SiteMode {
  if (site.disabledBy !== null) return 'off';
  return site.httpAllowedBy !== null ? 'rules' : 'everything';
}

/** The status line in words. Kinds this page does not know yet are shown by `secure` alone. */
function statusText(s: PageStatus): StatusText {
  const retry = t('popupRetry');
  switch (s.kind) {
    case 'not-a-web-page':
      return { tone: 'neutral', title: t('statusNotAWebPage'), detail: t('statusNotAWebPageDetail') };
    case 'extension-off':
      return { tone: 'neutral', title: t('statusOff'), detail: t('statusOffDetail'), action: t('statusOffAction'), act: 'turn-on' };
    case 'https-by-ruleset':
      return { tone: 'ok', title: t('statusHttpsByRuleset'), detail: t('statusHttpsByRulesetDetail', s.ruleset) };
    case 'https-by-upgrade':
      return { tone: 'ok', title: t('statusHttpsByUpgrade'), detail: t('statusHttpsByUpgradeDetail') };
    case 'https-already':
      return { tone: 'ok', title: t('statusSecure'), detail: t('statusHttpsAlreadyDetail') };
    case 'http-site-off':
      return { tone: 'warn', title: t('statusHttpSiteOff'), detail: t('statusHttpSiteOffDetail', s.entry), action: t('statusHttpSiteOffAction') };
    case 'http-loop-guard':
      return { tone: 'warn', title: t('statusHttpLoopGuard'), detail: t('statusHttpLoopGuardDetail', s.host), action: retry };
    case 'http-allowed':
      return { tone: 'warn', title: t('statusHttpAllowed'), detail: t('statusHttpAllowedDetail', s.entry), action: retry };
    case 'http-upgrade-failed':
      return s.onFallbackPage
        ? { tone: 'warn', title: t('statusFallbackPage', s.host), detail: t('statusFallbackPageDetail'), action: retry }
        : { tone: 'warn', title: t('statusHttpUpgradeFailed'), detail: t('statusHttpUpgradeFailedDetail', s.host), action: retry };
    case 'http-ruleset-off':
      return {
        tone: 'warn',
        title: t('statusHttpRulesetOff'),
        detail: t('statusHttpRulesetOffDetail', s.rulesets.join('”, “')),
        action: t('statusHttpRulesetOffAction'),
      };
    case 'http-ruleset-excludes':
      return { tone: 'neutral', title: t('statusHttpRulesetExcludes'), detail: t('statusHttpRulesetExcludesDetail', s.ruleset) };
    case 'http-not-yet':
      return { tone: 'warn', title: t('statusHttpNotYet'), detail: t('statusHttpNotYetDetail'), action: t('statusHttpNotYetAction') };
    case 'http-no-rule':
      return s.localAddress && s.httpsFirst
        ? { tone: 'neutral', title: t('statusHttpLocal'), detail: t('statusHttpLocalDetail') }
        : s.httpsFirst
          ? { tone: 'warn', title: t('statusHttpNoRule'), detail: t('statusHttpNoRuleDetail') }
          : { tone: 'warn', title: t('statusHttpNoRule'), detail: t('statusHttpNoRuleDetail'), action: t('statusHttpsFirstOnAction'), act: 'https-first-on' };
    default: {
      const other = s as PageStatus;
      return {
        tone: other.secure ? 'ok' : 'warn',
        title: t(other.secure ? 'statusSecure' : 'statusNotSecure'),
        detail: '',
        action: other.retry ? retry : undefined,
      };
    }
  }
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

  const siteDisabled = site?.disabledBy != null;
  if (site !== null) {
    $('#site-host').replaceChildren(hostNode(site.hostWithPort));
    $('#upgraded-count').textContent = state.upgraded === 0 ? '' : tCount('popupUpgraded', state.upgraded, String(state.upgraded));
    const mode = siteMode(site);
    $<HTMLInputElement>(`#site-mode-${mode}`).checked = true;
    $('#site-mode-hint').textContent = t(MODE_HINT[mode]);
    $('#site-help-rules').hidden = mode !== 'everything';
    $('#site-help-off').hidden = mode === 'off';
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

const MODE_HINT: Record<SiteMode, string> = {
  everything: 'popupSiteEverythingHint',
  rules: 'popupSiteRulesOnlyHint',
  off: 'popupSiteOffHint',
};

/**
 * Puts the site in `mode` and reloads the page into it: a page httpsify moved to HTTPS goes
 * back to the http:// address when the new state would not have moved it (off, or rulesets
 * only for an HTTPS-first upgrade), so what the user sees is what they asked for.
 */
async function setSiteMode(mode: SiteMode): Promise<void> {
  const site = state.site;
  if (site === null || siteMode(site) === mode) return;
  const before = state.status.kind;
  if (site.disabledBy !== null) await background.request({ type: 'siteRemove', list: 'disabledSites', entry: site.disabledBy });
  if (site.httpAllowedBy !== null && mode !== 'rules') await background.request({ type: 'siteRemove', list: 'httpAllowedSites', entry: site.httpAllowedBy });
  if (mode === 'off') await background.request({ type: 'siteAdd', list: 'disabledSites', entry: site.hostWithPort });
  if (mode === 'rules' && site.httpAllowedBy === null) await background.request({ type: 'siteAdd', list: 'httpAllowedSites', entry: site.hostWithPort });
  const byUs = before === 'https-by-ruleset' || before === 'https-by-upgrade';
  const toHttp = site.scheme === 'https' && ((mode === 'off' && byUs) || (mode === 'rules' && before === 'https-by-upgrade'));
  await reloadTab(toHttp ? site.url.replace(/^https:/, 'http:') : undefined);
  await load();
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
  const box = h('input', { type: 'checkbox', role: 'switch', class: 'switch', checked: r.active, dataset: { name: r.name } });
  box.addEventListener('change', () => void busyWhile(() => toggleRuleset(r, box.checked))());
  return h(
    'label',
    { title: r.note ?? t('popupStableTooltip'), class: 'switch-row rule' },
    h('span', { class: 'text' }, h('span', { class: 'name' }, r.name), r.user ? h('span', { class: 'tag' }, t('popupUserRuleBadge')) : null),
    box,
  );
}

async function toggleRuleset(r: RulesetRow, active: boolean): Promise<void> {
  await background.request({ type: 'setRuleset', name: r.name, active });
  await reloadTab();
  await load();
}

async function reloadTab(url?: string): Promise<void> {
  if (tab?.id === undefined) return;
  if (url !== undefined) await api.tabs.update(tab.id, { url }).catch(() => undefined);
  else await api.tabs.reload(tab.id).catch(() => undefined);
}

async function saveRule(rule: { host: string; from: string; to: string }): Promise<void> {
  const list = $('#add-rule-errors');
  const typed = $<HTMLInputElement>('#rule-host').value.trim();
  const result = await background.request<SaveResult>({ type: 'userRuleSave', xml: simpleRuleXml(rule) });
  if (isError(result) || !result.ok) {
    const errors = isError(result) ? [{ message: result.error, severity: 'error' }] : result.errors;
    // Not a site name at all: one sentence says so and how to fix it; the checks' own words under "Details".
    const sentence = (m: string) => (isSiteName(typed) ? plainProblem(m, 'problemRule') : t('problemSiteName', typed));
    list.replaceChildren(...errors.map((d) => problemItem(sentence(d.message), d.message, d.severity)));
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
    await background.request({ type: 'setFlag', flag: 'globalEnabled', value: (e.target as HTMLInputElement).checked });
    await reloadTab();
    await load();
  });
  on('#https-first', 'change', async (e) => {
    const value = (e.target as HTMLInputElement).checked;
    await background.request({ type: 'setFlag', flag: 'httpsFirst', value });
    // Turning it on should take effect on the page in front of the user.
    if (value) await reloadTab();
    await load();
  });
  on('#site-mode', 'change', async (e) => setSiteMode((e.target as HTMLInputElement).value as SiteMode));
  on('#site-help-rules', 'click', async () => setSiteMode('rules'));
  on('#site-help-off', 'click', async () => setSiteMode('off'));
  on('#status-action', 'click', async (e) => {
    const act = (e.target as HTMLElement).dataset.act;
    if (act === 'turn-on' || act === 'https-first-on') {
      await background.request({ type: 'setFlag', flag: act === 'turn-on' ? 'globalEnabled' : 'httpsFirst', value: true });
      await reloadTab();
      await load();
      return;
    }
    const result = await background.request<{ ok: boolean; url?: string }>({ type: 'pageRetry', tabId: tab?.id ?? -1 });
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
  $('#open-options').addEventListener('click', () => void api.runtime.openOptionsPage());
  document.body.dataset.ready = 'true';
  // The page keeps loading while the popup is open: keep the list and counts current.
  setInterval(() => {
    if (busy === 0) void load();
  }, 1000);
}

void init();
