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
