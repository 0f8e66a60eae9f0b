import { h } from './dom.js';
import { t } from './i18n.js';

/**
 * Problems in words: every error a page shows is a sentence saying what is wrong and what to
 * do; the raw text (parser messages, setting keys, codes) sits under "Details" for whoever
 * needs it. `plainProblem` recognises the raw shapes the background sends; anything else gets
 * the page's own general sentence.
 */
const SHAPES: [RegExp, string][] = [
  [/too large/i, 'problemTooLarge'],
  [/not JSON|JSON|Unexpected token|Unexpected end/i, 'problemNotJson'],
  [/not an httpsify settings file|"format"/, 'problemNotSettings'],
  [/newer httpsify/, 'problemNewer'],
  [/^unknown (key|setting)/, 'problemUnknownSetting'],
  [/^[A-Za-z]+: /, 'problemSettingValue'],
  [/rule|line \d+/i, 'problemRule'],
];

export function plainProblem(raw: string, fallback = 'problemGeneric'): string {
  for (const [re, key] of SHAPES) if (re.test(raw)) return t(key);
  return t(fallback);
}

/** A "Details" disclosure holding the raw text, or nothing when there is none. */
export function details(raw: string): HTMLDetailsElement {
  return h(
    'details',
    { class: 'problem-details' },
    h('summary', {}, t('problemDetails')),
    h('code', {}, raw),
  );
}

/** One problem as a list item: the sentence, then the raw text under "Details". */
export function problemItem(sentence: string, raw: string, severity = 'error'): HTMLLIElement {
  return h(
    'li',
    { class: severity },
    h('span', {}, sentence),
    raw === '' || raw === sentence ? null : details(raw),
  );
}

/** Fills an element (a paragraph or a list item) with a sentence and the raw text's details. */
export function showProblem(el: HTMLElement, raw: string, fallback = 'problemGeneric'): void {
  const sentence = plainProblem(raw, fallback);
  el.replaceChildren(h('span', {}, sentence), ...(raw === sentence ? [] : [details(raw)]));
}

/**
 * What a site field holds, with a pasted address reduced to its site: `https://www.example.com/a?b`
 * is `www.example.com`, a port other than the scheme's stays (`example.com:8080`). Anything
 * else is passed on as typed, for the background's own check.
 */
export function siteFromInput(value: string): string {
  const text = value.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  try {
    const url = new URL(text);
    return url.host === '' ? text : url.host;
  } catch {
    return text;
  }
}
