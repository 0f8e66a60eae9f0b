/**
 * The toolbar button per tab: the padlock for the extension's state on the tab's site, its
 * title, and the badge with the number of upgraded requests.
 */
import { ext } from '../platform/browser-api.js';
import type { Settings } from '../settings/schema.js';
import { badgeText, drawIcon, ICON_TITLE_MESSAGE, iconState, type IconState } from './icon.js';
import type { TabActivity } from './tab-activity.js';

/** Icon images per state and size; the browser takes them as `{ size: ImageData }`. */
type IconImages = Record<number, ImageData>;

/**
 * After a refresh goes out, what is asked for within this window waits for its end and goes
 * out once per tab. A page's upgraded requests each ask for one: sent at once, 300 images were
 * 1,200 messages to the browser, competing with the requests' own events for the extension's
 * one thread.
 */
export const ICON_REFRESH_WINDOW_MS = 100;

/** What the icon shows of the settings (the controller, from above, is one). */
export interface IconSettings {
  readonly settings: Pick<Settings, 'globalEnabled' | 'httpsFirst' | 'showBadge'>;
  siteDisabledBy(url: string): string | null;
}

export class ToolbarIcon {
  private readonly images = new Map<IconState, IconImages>();
  /** Per tab, the page of the latest refresh asked for and not yet sent. */
  private readonly pending = new Map<number, string | undefined>();
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    /** The settings once they are read. */
    private readonly controller: () => IconSettings | null,
    private readonly ready: Promise<IconSettings>,
    private readonly activity: TabActivity,
  ) {}

  /**
   * The tab's icon, title and badge for the page at `url`: at once, or at the end of the window
   * of the last refresh (the latest ask per tab wins).
   */
  refreshSoon(tabId: number, url: string | undefined): void {
    this.pending.set(tabId, url);
    if (this.timer === null) this.flush();
  }

  private flush(): void {
    const batch = [...this.pending];
    this.pending.clear();
    for (const [tab, page] of batch) void this.refresh(tab, page);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.pending.size > 0) this.flush();
    }, ICON_REFRESH_WINDOW_MS);
  }

  /** The tab's icon, title and badge for the page at `url`. */
  async refresh(tabId: number, url: string | undefined): Promise<void> {
    const c = this.controller();
    if (c === null) return;
    const s = c.settings;
    const state = iconState({
      globalEnabled: s.globalEnabled,
      httpsFirst: s.httpsFirst,
      siteDisabled: url !== undefined && c.siteDisabledBy(url) !== null,
    });
    const imageData = this.imagesFor(state);
    try {
      if (imageData !== null) await ext.action.setIcon({ tabId, imageData });
      await ext.action.setTitle({
        tabId,
        title: ext.i18n.getMessage(ICON_TITLE_MESSAGE[state]) || 'httpsify',
      });
      await ext.action.setBadgeText({
        tabId,
        text: s.globalEnabled
          ? badgeText(this.activity.get(tabId)?.upgraded ?? 0, s.showBadge)
          : '',
      });
      await ext.action.setBadgeBackgroundColor({ tabId, color: '#444444' });
    } catch {
      // The tab closed in the meantime.
    }
  }

  /** Every tab, and the default icon (the settings changed). */
  async refreshAll(): Promise<void> {
    const c = this.controller() ?? (await this.ready);
    const s = c.settings;
    const imageData = this.imagesFor(
      iconState({ globalEnabled: s.globalEnabled, httpsFirst: s.httpsFirst, siteDisabled: false }),
    );
    if (imageData !== null) await ext.action.setIcon({ imageData }).catch(() => undefined);
    for (const tab of await ext.tabs.query({}))
      if (tab.id !== undefined) await this.refresh(tab.id, tab.url);
  }

  /** Drawn once per state; null where there is no canvas to draw on. */
  private imagesFor(state: IconState): IconImages | null {
    if (typeof OffscreenCanvas === 'undefined') return null;
    let images = this.images.get(state);
    if (images === undefined) {
      images = { 16: drawIcon(state, 16), 32: drawIcon(state, 32) };
      this.images.set(state, images);
    }
    return images;
  }
}
