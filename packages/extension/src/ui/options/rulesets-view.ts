import type { RulesetDetails, RulesetIndex } from '../../protocol/ui-protocol.js';
import { background, isError } from '../shared/client.js';
import { $, h } from '../shared/dom.js';
import { t, tCount } from '../shared/i18n.js';
import { VirtualList } from '../shared/virtual-list.js';

const ROW_HEIGHT = 48;

export type RulesetFilter = 'all' | 'on' | 'off' | 'default-off' | 'changed';

/** Row indexes of `index` that pass the filter and the search (name substring, or host match). */
export function filterRulesets(
  index: RulesetIndex,
  lowerNames: string[],
  query: string,
  filter: RulesetFilter,
  hostMatches: Set<string> | null,
): number[] {
  const q = query.trim().toLowerCase();
  const out: number[] = [];
  for (let i = 0; i < index.names.length; i++) {
    const active = index.active[i] as boolean;
    const def = index.defaultActive[i] as boolean;
    if (filter === 'on' && !active) continue;
    if (filter === 'off' && active) continue;
    if (filter === 'default-off' && def) continue;
    if (filter === 'changed' && active === def) continue;
    if (
      q !== '' &&
      !(lowerNames[i] as string).includes(q) &&
      !(hostMatches?.has(index.names[i] as string) ?? false)
    )
      continue;
    out.push(i);
  }
  return out;
}

/** The "All rulesets" list: every ruleset with its checkbox, searchable and filterable. */
export class RulesetsView {
  private index: RulesetIndex = { names: [], active: [], defaultActive: [], notes: [], user: [] };
  private lower: string[] = [];
  /** Hosts by ruleset name, once the background sent them (after the list first shows). */
  private hosts: Record<string, string> = {};
  private hostsAsked = false;
  private shown: number[] = [];
  private hostMatches: Set<string> | null = null;
  private readonly list: VirtualList<number>;
  private searchSeq = 0;

  constructor() {
    this.list = new VirtualList<number>({
      container: $('#ruleset-list'),
      rowHeight: ROW_HEIGHT,
      render: (i, _n, row) => this.renderRow(i, row),
    });
    $<HTMLInputElement>('#ruleset-search').addEventListener('input', () => void this.search());
    $<HTMLSelectElement>('#ruleset-filter').addEventListener('change', () => this.apply());
    $('#ruleset-reset-shown').addEventListener('click', () => void this.resetShown());
  }

  async load(): Promise<void> {
    this.index = await background.request<RulesetIndex>({ type: 'rulesetIndex' });
    this.lower = this.index.names.map((n) => n.toLowerCase());
    this.apply();
    if (this.hostsAsked) void this.loadHosts();
  }

  /**
   * Asks for every ruleset's hosts once the page is up: with 24k rulesets the background needs
   * about a second for them the first time, which must not hold up opening the page.
   */
  async loadHosts(): Promise<void> {
    this.hostsAsked = true;
    const hosts = await background.request<Record<string, string> | { error: string }>({
      type: 'rulesetHosts',
    });
    if (isError(hosts)) return;
    this.hosts = hosts;
    this.list.refresh();
  }

  private async search(): Promise<void> {
    const q = $<HTMLInputElement>('#ruleset-search').value.trim().toLowerCase();
    const seq = ++this.searchSeq;
    // Anything that looks like a host name is also looked up through the engine's host index.
    this.hostMatches =
      q.includes('.') && !/\s/.test(q)
        ? new Set(await background.request<string[]>({ type: 'rulesetsForHost', host: q }))
        : null;
    if (seq === this.searchSeq) this.apply();
  }

  private apply(): void {
    const q = $<HTMLInputElement>('#ruleset-search').value;
    const filter = $<HTMLSelectElement>('#ruleset-filter').value as RulesetFilter;
    this.shown = filterRulesets(this.index, this.lower, q, filter, this.hostMatches);
    $('#ruleset-count').textContent = tCount('optionsRulesetCount', this.index.names.length, [
      String(this.shown.length),
      String(this.index.names.length),
    ]);
    // As tall as its rows, up to a screenful: a short result leaves no empty box.
    const list = $('#ruleset-list');
    list.style.height = `${Math.min(ROW_HEIGHT * 9, ROW_HEIGHT * this.shown.length) + 2}px`;
    list.hidden = this.shown.length === 0;
    this.list.setItems(this.shown);
  }

  private renderRow(i: number, row: HTMLElement): void {
    const name = this.index.names[i] as string;
    const active = this.index.active[i] as boolean;
    const changed = active !== this.index.defaultActive[i];
    const note = this.index.notes[i];
    // The same ruleset in the same row: update in place, so a key press in progress on its
    // checkbox is not lost to a redraw.
    let box = row.dataset.name === name ? row.querySelector<HTMLInputElement>('input') : null;
    if (box === null) {
      const fresh = h('input', {
        type: 'checkbox',
        role: 'switch',
        class: 'switch',
        dataset: { name },
      });
      fresh.addEventListener(
        'change',
        () => void this.toggle(Number(row.dataset.item), fresh.checked),
      );
      const tags = h('span', { class: 'tags' });
      row.replaceChildren(
        h(
          'label',
          { class: 'switch-row', title: note ?? '' },
          h(
            'span',
            { class: 'ruleset-text' },
            h('span', { class: 'ruleset-name' }, name, ' ', tags),
            h('span', { class: 'ruleset-hosts' }),
          ),
          fresh,
        ),
        h('button', {
          type: 'button',
          class: 'view',
          textContent: t('commonView'),
          'aria-label': t('commonViewNamed', name),
          onclick: () => void this.view(name),
        }),
      );
      row.dataset.name = name;
      box = fresh;
    }
    row.dataset.item = String(i);
    box.checked = active;
    const hosts = row.querySelector('.ruleset-hosts');
    if (hosts !== null) hosts.textContent = this.hosts[name] ?? '';
    const tags: HTMLElement[] = [];
    if (this.index.user[i]) tags.push(h('span', { class: 'tag' }, t('popupUserRuleBadge')));
    if (!this.index.defaultActive[i])
      tags.push(h('span', { class: 'tag', title: note ?? '' }, t('optionsTagDefaultOff')));
    if (changed) tags.push(h('span', { class: 'tag changed' }, t('optionsTagChanged')));
    row.querySelector('.tags')?.replaceChildren(...tags);
  }

  /** The ruleset viewer: what a ruleset covers and how it rewrites, in a dialog. */
  private async view(name: string): Promise<void> {
    const d = await background.request<RulesetDetails | { error: string }>({
      type: 'rulesetDetails',
      name,
    });
    if (isError(d)) return;
    $('#viewer-title').textContent = d.name;
    const source =
      d.source === 'defaults'
        ? t('optionsViewerDefaults')
        : d.source === 'user'
          ? t('optionsViewerUser')
          : t('optionsViewerChannel', d.source);
    $('#viewer-note').textContent =
      d.defaultOff === null ? source : `${source} ${t('optionsViewerDefaultOff', d.defaultOff)}`;
    $('#viewer-hosts').replaceChildren(...d.hosts.map((host) => h('li', {}, host)));
    $('#viewer-rules').replaceChildren(
      ...d.rules.map((r) => h('tr', {}, h('td', {}, r.from), h('td', {}, r.to))),
    );
    $('#viewer-exclusions-box').hidden = d.exclusions.length === 0;
    $('#viewer-exclusions').replaceChildren(...d.exclusions.map((e) => h('li', {}, e)));
    $<HTMLDialogElement>('#ruleset-viewer').showModal();
  }

  private async toggle(i: number, active: boolean): Promise<void> {
    // The row shows the new state at once; a refused change puts it back.
    this.index.active[i] = active;
    const result = await background.request<unknown>({
      type: 'setRuleset',
      name: this.index.names[i] as string,
      active,
    });
    if (isError(result)) this.index.active[i] = !active;
    this.list.refresh();
  }

  /** Bulk reset: the shown rulesets the user changed go back to their defaults. */
  private async resetShown(): Promise<void> {
    const names = this.shown
      .filter((i) => this.index.active[i] !== this.index.defaultActive[i])
      .map((i) => this.index.names[i] as string);
    if (names.length === 0) return;
    if (!confirm(tCount('optionsResetShownConfirm', names.length, String(names.length)))) return;
    await background.request({ type: 'resetRulesets', names });
    await this.load();
  }
}
