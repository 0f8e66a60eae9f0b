/**
 * What happened in each tab since its last top-level navigation: the rulesets that could apply
 * to its requests (the popup lists them) and how many requests were upgraded (the badge).
 */
export interface TabRecord {
  /** The page's URL (the last main-frame request). */
  url: string;
  /** Ruleset names matched by the main frame, in candidate order. */
  mainFrame: string[];
  /** Ruleset names matched by other requests of the page. */
  others: string[];
  upgraded: number;
  /** The page itself was upgraded by HTTPS-first. */
  httpsFirst: boolean;
  /** Where our upgrade of the main frame leads (its second sighting belongs to this page). */
  upgradeTarget?: string;
  /** The main frame arrived over http:// and went on to https:// through us. */
  mainUpgraded?: boolean;
  /** The http:// address the page was asked for, when it went on to https:// through us. */
  upgradedFrom?: string;
}

export interface RequestSeen {
  tabId: number;
  type: string;
  url: string;
  /** Names of the rulesets whose targets cover the request's host, in candidate order. */
  rulesets: string[];
  /** The request was (or is being) moved to HTTPS by us. */
  upgraded: boolean;
  httpsFirst?: boolean;
  /** The https:// address the upgrade leads to, where known. */
  upgradedTo?: string;
}

export class TabActivity {
  private readonly tabs = new Map<number, TabRecord>();

  /** Records one request; returns whether the tab's record changed. */
  note(r: RequestSeen): boolean {
    if (r.tabId < 0) return false;
    if (r.type === 'main_frame') {
      const prev = this.tabs.get(r.tabId);
      // A main-frame request that an upgrade redirected shows up twice (http, then https):
      // the second sighting belongs to the same page.
      if (
        prev !== undefined &&
        r.url.startsWith('https:') &&
        (prev.url.replace(/^http:/, 'https:') === r.url || prev.upgradeTarget === r.url)
      ) {
        if (prev.url.startsWith('http:') && prev.upgraded > 0) {
          prev.mainUpgraded = true;
          prev.upgradedFrom = prev.url;
        }
        prev.url = r.url;
        for (const n of r.rulesets) if (!prev.mainFrame.includes(n)) prev.mainFrame.push(n);
        return true;
      }
      // Firefox tells non-blocking listeners of a redirect's two requests in either order: the
      // upgraded http:// sighting may come after the https:// one it led to. Either way the tab
      // gets one fresh record of an upgraded page (a reload of the same page starts afresh too).
      const target =
        r.upgraded && r.url.startsWith('http:')
          ? (r.upgradedTo ?? r.url.replace(/^http:/, 'https:'))
          : null;
      if (prev !== undefined && target !== null && prev.url === target) {
        this.tabs.set(r.tabId, {
          url: target,
          mainFrame: [...new Set([...r.rulesets, ...prev.mainFrame])],
          others: [],
          upgraded: 1,
          httpsFirst: r.httpsFirst === true,
          upgradeTarget: target,
          mainUpgraded: true,
          upgradedFrom: r.url,
        });
        return true;
      }
      // Every ruleset that matched the page stays listed (the old popup kept only the last one).
      const rec: TabRecord = {
        url: r.url,
        mainFrame: [...new Set(r.rulesets)],
        others: [],
        upgraded: r.upgraded ? 1 : 0,
        httpsFirst: r.httpsFirst === true,
      };
      if (r.upgraded && r.upgradedTo !== undefined) rec.upgradeTarget = r.upgradedTo;
      this.tabs.set(r.tabId, rec);
      return true;
    }
    const rec = this.tabs.get(r.tabId);
    if (rec === undefined) return false;
    let changed = false;
    for (const n of r.rulesets) {
      if (rec.mainFrame.includes(n) || rec.others.includes(n)) continue;
      rec.others.push(n);
      changed = true;
    }
    if (r.upgraded) {
      rec.upgraded++;
      changed = true;
    }
    return changed;
  }

  get(tabId: number): TabRecord | undefined {
    return this.tabs.get(tabId);
  }

  /** Main-frame rulesets first, then the rest alphabetically (case-insensitive). */
  orderedRulesets(tabId: number): string[] {
    const rec = this.tabs.get(tabId);
    if (rec === undefined) return [];
    const others = rec.others
      .filter((n) => !rec.mainFrame.includes(n))
      .sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' }));
    return [...rec.mainFrame, ...others];
  }

  remove(tabId: number): void {
    this.tabs.delete(tabId);
  }

  /** For storage.session: the service worker may be stopped between events. */
  snapshot(): [number, TabRecord][] {
    return [...this.tabs];
  }

  restore(entries: Iterable<[number, TabRecord]>): void {
    for (const [id, rec] of entries) if (!this.tabs.has(id)) this.tabs.set(id, rec);
  }
}
