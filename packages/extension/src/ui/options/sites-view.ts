import type { SiteListName } from '../../protocol/ui-protocol.js';
import type { Settings } from '../../settings/schema.js';
import { background, isError } from '../shared/client.js';
import { $, h, hostParts } from '../shared/dom.js';
import { t } from '../shared/i18n.js';
import { siteFromInput } from '../shared/problem.js';
import type { SiteState } from '../../protection/protection-protocol.js';

/** The three per-site states; choosing one moves the entry to its list (or off both). */
function stateSelect(
  entry: string,
  current: SiteState,
  choose: (s: SiteState) => Promise<void>,
): HTMLSelectElement {
  const select = h('select', {
    class: 'site-state',
    'aria-label': t('optionsSiteState', entry),
  }) as HTMLSelectElement;
  const names: [SiteState, string][] = [
    ['upgrade', 'optionsSiteStateUpgrade'],
    ['rulesets', 'optionsSiteStateRulesets'],
    ['off', 'optionsSiteStateOff'],
  ];
  for (const [value, message] of names)
    select.append(h('option', { value, textContent: t(message) }));
  select.value = current;
  select.addEventListener('change', () => void choose(select.value as SiteState));
  return select;
}

/** Both per-site lists: add without visiting the site, remove, wildcard entries allowed. */
export class SitesView {
  constructor(private readonly onChange: (s: Settings) => void) {
    for (const box of Array.from(document.querySelectorAll<HTMLElement>('[data-list]'))) {
      const list = box.dataset.list as SiteListName;
      const form = $<HTMLFormElement>('.site-add', box);
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        const input = $<HTMLInputElement>('.site-input', box);
        const typed = input.value;
        const result = await background.request<Settings | { error: string }>({
          type: 'siteAdd',
          list,
          entry: siteFromInput(typed),
        });
        $('.site-error', box).hidden = !isError(result);
        if (isError(result)) return;
        // Only what was added: a next entry typed while this one was saved stays in the field.
        if (input.value === typed) input.value = '';
        this.onChange(result);
      });
    }
  }

  render(s: Settings): void {
    for (const box of Array.from(document.querySelectorAll<HTMLElement>('[data-list]'))) {
      const list = box.dataset.list as SiteListName;
      $('.site-empty', box).hidden = s[list].length > 0;
      $('.site-list', box).replaceChildren(
        ...s[list].map((entry) =>
          h(
            'li',
            {},
            h('span', { class: 'host' }, ...hostParts(entry)),
            stateSelect(entry, list === 'disabledSites' ? 'off' : 'rulesets', async (state) =>
              this.onChange(
                await background.request<Settings>({ type: 'siteState', entry, state }),
              ),
            ),
            h('button', {
              type: 'button',
              class: 'danger',
              'aria-label': t('commonRemoveNamed', entry),
              textContent: t('commonRemove'),
              onclick: async () =>
                this.onChange(
                  await background.request<Settings>({ type: 'siteRemove', list, entry }),
                ),
            }),
          ),
        ),
      );
    }
  }
}
