import { ext } from '../../platform/browser-api.js';
import { type AboutInfo, RULE_REFUSALS_KEY, type RuleLimit } from '../../protocol/ui-protocol.js';
import type { Settings } from '../../settings/schema.js';
import { background, isError } from '../shared/client.js';
import { $, h } from '../shared/dom.js';
import { localize, t, tCount } from '../shared/i18n.js';
import { problemItem, showProblem } from '../shared/problem.js';
import { BackupView } from './backup-view.js';
import { ChannelsView } from './channels-view.js';
import { LibraryView } from './library-view.js';
import { RulesetsView } from './rulesets-view.js';
import { ProtectionView } from './protection-view.js';
import { SitesView } from './sites-view.js';
import { RuleFormView } from './rule-form-view.js';
import { UserRulesView } from './user-rules-view.js';

const FLAGS = ['globalEnabled', 'httpsFirst', 'mixedContent', 'showBadge'] as const;

let rulesets: RulesetsView;
let sites: SitesView;
let userRules: UserRulesView;
let channels: ChannelsView;
let protection: ProtectionView;
let library: LibraryView;

/** The names the page shows for the stored settings a repair can name. */
const SETTING_LABELS: Record<string, string> = {
  globalEnabled: 'optionsGlobalEnabled',
  httpsFirst: 'popupHttpsFirst',
  mixedContent: 'optionsMixedContent',
  showBadge: 'optionsShowBadge',
  rulesetOverrides: 'optionsAllRulesets',
  disabledSites: 'optionsDisabledSites',
  httpAllowedSites: 'optionsHttpAllowedSites',
  userRules: 'optionsUserRules',
  channels: 'optionsChannels',
  stats: 'optionsStatistics',
};

function render(s: Settings): void {
  for (const f of FLAGS) $<HTMLInputElement>(`#opt-${f}`).checked = s[f];
  sites.render(s);
  userRules.render(s);
  void protection?.refresh();
  void showLimits();
  renderStats(s.stats);
  $('#repairs').hidden = s.repairs.length === 0;
  // Which setting, by the name the page shows for it; its key, the problem and the value under "Details".
  $('#repair-list').replaceChildren(
    ...s.repairs.map((r) =>
      problemItem(
        t('optionsRepairPlain', t(SETTING_LABELS[r.key] ?? 'optionsRepairSomeSetting')),
        `${r.key}: ${r.problem} — ${r.original}`,
      ),
    ),
  );
}

function renderStats(stats: Settings['stats']): void {
  $('#stat-upgrades').textContent = String(stats.upgrades);
  $('#stat-fallbacks').textContent = String(stats.fallbacks);
  $('#stat-http-hosts').replaceChildren(
    ...[...stats.httpHosts].reverse().map((host) => h('li', {}, host)),
  );
  $('#stat-http-empty').hidden = stats.httpHosts.length > 0;
}

/**
 * The background adds to the statistics while the page is open (a batch every few seconds):
 * follow them, and only them, so nothing the user is editing here is redrawn.
 */
function followStats(): void {
  ext.storage.onChanged.addListener((changes, area) => {
    // The rule writer keeps what the browser could not hold here: the notice follows it live,
    // whichever window changed the settings.
    if (area === 'local' && RULE_REFUSALS_KEY in changes) void showLimits();
    if (area !== 'local' || !('stats' in changes)) return;
    void background.request<Settings>({ type: 'settings' }).then((s) => {
      if (!isError(s)) renderStats(s.stats);
    });
  });
}

/** Settings changed: redraw, and reload the rulesets list when states may have moved. */
function changed(s: Settings | { error: string }): void {
  const error = $('#error');
  error.hidden = !isError(s);
  if (isError(s)) {
    // Show what went wrong and what is actually in effect now.
    showProblem(error, s.error);
    void background.request<Settings>({ type: 'settings' }).then(render);
    return;
  }
  render(s);
  void rulesets.load();
}

/** The message for each part of the settings the browser's rule limits can leave out. */
const LIMIT_MESSAGES: Record<RuleLimit['part'], string> = {
  userRules: 'optionsLimitUserRules',
  sites: 'optionsLimitSites',
  rulesets: 'optionsLimitRulesets',
  knownHosts: 'optionsLimitKnownHosts',
  other: 'optionsLimitOther',
};

/** What of the settings the browser does not hold (Chromium's rule limits), in plain words. */
async function showLimits(): Promise<void> {
  const limits = await background.request<RuleLimit[] | { error: string }>({ type: 'ruleLimits' });
  const list = isError(limits) ? [] : limits;
  $('#limits').hidden = list.length === 0;
  $('#limit-list').replaceChildren(
    ...list.map((l) => problemItem(t(LIMIT_MESSAGES[l.part]), l.detail, 'warning')),
  );
}

/** Version and the date of the bundled rulesets, at the foot of the navigation. */
async function showAbout(): Promise<void> {
  const about = await background.request<AboutInfo | { error: string }>({ type: 'about' });
  if (isError(about)) return;
  $('#about-version').textContent = t('optionsAboutVersion', about.version);
  const count = about.rulesetCount.toLocaleString();
  if (about.rulesetsTimestamp <= 0) {
    $('#about-rulesets').textContent = tCount(
      'optionsAboutRulesetsUndated',
      about.rulesetCount,
      count,
    );
    return;
  }
  const date = new Date(about.rulesetsTimestamp * 1000).toLocaleDateString(undefined, {
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    timeZone: 'UTC',
  });
  $('#about-rulesets').textContent = tCount('optionsAboutRulesets', about.rulesetCount, [
    count,
    date,
  ]);
}

async function init(): Promise<void> {
  localize();
  // Chrome's HttpAllowlist policy format means nothing to Firefox: its buttons are not offered there.
  if (location.protocol === 'moz-extension:')
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('.chromium-only')))
      el.hidden = true;
  rulesets = new RulesetsView();
  sites = new SitesView(changed);
  userRules = new UserRulesView(changed);
  new RuleFormView(changed, (xml) => userRules.edit(undefined, xml));
  channels = new ChannelsView(changed);
  protection = new ProtectionView(changed);
  // An import changes the ruleset list and its counts: show them at once.
  library = new LibraryView(() => {
    void rulesets.load();
    void rulesets.loadHosts();
  });
  for (const f of FLAGS) {
    $<HTMLInputElement>(`#opt-${f}`).addEventListener('change', async (e) => {
      changed(
        await background.request<Settings>({
          type: 'setFlag',
          flag: f,
          value: (e.target as HTMLInputElement).checked,
        }),
      );
    });
  }
  new BackupView((s) => {
    changed(s);
    void channels.load();
  });
  $('#stats-reset').addEventListener('click', async () => {
    if (confirm(t('optionsStatsResetConfirm')))
      render(await background.request<Settings>({ type: 'resetStats' }));
  });
  void showAbout();
  $('#repairs-dismiss').addEventListener('click', async () =>
    render(await background.request<Settings>({ type: 'clearRepairs' })),
  );
  render(await background.request<Settings>({ type: 'settings' }));
  followStats();
  await Promise.all([rulesets.load(), channels.load(), library.load()]);
  document.body.dataset.ready = 'true';
  void rulesets.loadHosts();
}

void init();
