/** The toolbar icon's four looks; the title and colour tell them apart without the icon. */
export type IconState = 'active' | 'https-first' | 'site-disabled' | 'off';

export function iconState(s: {
  globalEnabled: boolean;
  httpsFirst: boolean;
  siteDisabled: boolean;
}): IconState {
  if (!s.globalEnabled) return 'off';
  if (s.siteDisabled) return 'site-disabled';
  return s.httpsFirst ? 'https-first' : 'active';
}

export const ICON_COLOURS: Record<IconState, { body: string; mark: string }> = {
  active: { body: '#1a7f37', mark: '#ffffff' },
  'https-first': { body: '#0b57d0', mark: '#ffffff' },
  'site-disabled': { body: '#b45309', mark: '#ffffff' },
  off: { body: '#6b7280', mark: '#e5e7eb' },
};

/** i18n message name of the title for each state. */
export const ICON_TITLE_MESSAGE: Record<IconState, string> = {
  active: 'iconTitleActive',
  'https-first': 'iconTitleHttpsFirst',
  'site-disabled': 'iconTitleSiteDisabled',
  off: 'iconTitleOff',
};

type Ctx = OffscreenCanvasRenderingContext2D;

/**
 * A padlock drawn at runtime (no image files to keep in sync): closed for active states, open
 * for "off" and "disabled on this site".
 */
export function drawIcon(state: IconState, size: number): ImageData {
  const canvas = new OffscreenCanvas(size, size);
  const ctx = canvas.getContext('2d') as Ctx;
  const { body, mark } = ICON_COLOURS[state];
  const u = size / 16;
  const open = state === 'off' || state === 'site-disabled';
  // Shackle.
  ctx.strokeStyle = body;
  ctx.lineWidth = 2 * u;
  ctx.beginPath();
  const shackleX = open ? 9.5 * u : 8 * u;
  ctx.arc(shackleX, 6 * u, 3.5 * u, Math.PI, 0);
  if (open) ctx.moveTo(shackleX + 3.5 * u, 6 * u);
  else ctx.lineTo(11.5 * u, 8 * u);
  ctx.moveTo(shackleX - 3.5 * u, 6 * u);
  ctx.lineTo(shackleX - 3.5 * u, open ? 6 * u : 8 * u);
  ctx.stroke();
  // Body.
  ctx.fillStyle = body;
  ctx.beginPath();
  ctx.roundRect(2 * u, 7.5 * u, 12 * u, 8 * u, 1.5 * u);
  ctx.fill();
  // Keyhole, or a slash for "off".
  ctx.fillStyle = mark;
  ctx.strokeStyle = mark;
  if (state === 'off') {
    ctx.lineWidth = 1.5 * u;
    ctx.beginPath();
    ctx.moveTo(5 * u, 13.5 * u);
    ctx.lineTo(11 * u, 9.5 * u);
    ctx.stroke();
  } else if (state === 'https-first') {
    // A small "arrow up" for "upgrade everything".
    ctx.beginPath();
    ctx.moveTo(8 * u, 9 * u);
    ctx.lineTo(11 * u, 12 * u);
    ctx.lineTo(9 * u, 12 * u);
    ctx.lineTo(9 * u, 14 * u);
    ctx.lineTo(7 * u, 14 * u);
    ctx.lineTo(7 * u, 12 * u);
    ctx.lineTo(5 * u, 12 * u);
    ctx.closePath();
    ctx.fill();
  } else {
    ctx.beginPath();
    ctx.arc(8 * u, 11 * u, 1.5 * u, 0, Math.PI * 2);
    ctx.fill();
    ctx.fillRect(7.4 * u, 11 * u, 1.2 * u, 3 * u);
  }
  return ctx.getImageData(0, 0, size, size);
}

/** Badge text: the number of upgraded requests, blank for none; compact past 999. */
export function badgeText(count: number, show: boolean): string {
  if (!show || count <= 0) return '';
  return count > 999 ? `${Math.floor(count / 1000)}k` : String(count);
}
