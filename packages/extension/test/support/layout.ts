/**
 * What every page must pass at every width, as one expression both browsers' drivers evaluate:
 * the elements that stick out past the viewport's right edge (none, so nothing scrolls sideways).
 */
export const SIDEWAYS_EXPRESSION = `(() => {
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth <= width) return [];
  return Array.from(document.querySelectorAll('body *'))
    .filter((e) => e.getBoundingClientRect().right > width + 0.5 && e.getClientRects().length > 0)
    .slice(0, 5)
    .map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ').join('.') : ''));
})()`;

/**
 * What the options page shows, in both browsers, after the matrix tests' problem steps (an
 * unreachable channel, a pasted non-definition, a rule for "my bank"): each problem in words.
 */
export const OPTIONS_PROBLEM_TEXTS = [
  'Problem',
  'The channel’s server could not be reached',
  'This is not a channel definition.',
  '“my bank” is not a site name.',
  'Which site',
  'Where it goes',
];
