/** UI text comes only from _locales (chrome.i18n); the key is shown if a message is missing. */
import { ext } from '../../platform/browser-api.js';

export function t(name: string, substitutions?: string | string[]): string {
  const text = ext?.i18n?.getMessage(name, substitutions);
  return text === undefined || text === '' ? name : text;
}

/**
 * The key of a counted message: `<base>One` for a count of 1, `<base>Other` for every other
 * count. chrome.i18n has no plural forms, so each counted message comes as such a pair.
 */
export function countKey(base: string, count: number): string {
  return `${base}${count === 1 ? 'One' : 'Other'}`;
}

/** A counted message; `count` picks the wording, `substitutions` fill it (the count among them). */
export function tCount(base: string, count: number, substitutions: string | string[]): string {
  return t(countKey(base, count), substitutions);
}

/**
 * Fills `data-i18n` (text), `data-i18n-title`, `data-i18n-placeholder` and
 * `data-i18n-aria-label` attributes under `root`.
 */
export function localize(root: ParentNode = document): void {
  const all = (attr: string) => Array.from(root.querySelectorAll<HTMLElement>(`[${attr}]`));
  for (const el of all('data-i18n')) el.textContent = t(el.dataset.i18n as string);
  for (const el of all('data-i18n-title')) el.title = t(el.dataset.i18nTitle as string);
  for (const el of all('data-i18n-placeholder'))
    el.setAttribute('placeholder', t(el.dataset.i18nPlaceholder as string));
  for (const el of all('data-i18n-aria-label'))
    el.setAttribute('aria-label', t(el.dataset.i18nAriaLabel as string));
  document.documentElement.lang = t('@@ui_locale').replace('_', '-');
  document.documentElement.dir = t('@@bidi_dir') === 'rtl' ? 'rtl' : 'ltr';
}
