/**
 * How many new third-party hosts one page, and one site, may teach the known-HTTPS-hosts store
 * (known-https-hosts.ts). A page that loads thousands of HTTPS subresources from hosts of its
 * choosing would otherwise fill the store (and the rules built from it) with them. The same
 * shares hold the new hosts whose pages another page sent a tab to (top-level navigations a
 * page started): they count against the page that started them.
 */
export const NEW_HOSTS_PER_PAGE = 24;
export const NEW_HOSTS_PER_SITE = 96;
/** Sites (and pages) whose counts are remembered (this session); the oldest are forgotten first. */
const MAX_SITES = 1000;
const MAX_PAGES = 1000;

export class LearnBudget {
  /**
   * `tabId page` -> new hosts that page taught in that tab. Keyed by both, so a page whose
   * count alternates with another's in one tab (a flood of navigations from one starting page)
   * never starts again from zero.
   */
  private readonly pages = new Map<string, number>();
  private readonly sites = new Map<string, number>();

  constructor(
    private readonly perPage = NEW_HOSTS_PER_PAGE,
    private readonly perSite = NEW_HOSTS_PER_SITE,
  ) {}

  /**
   * One more new host taught by the page `page` (its top-level URL) in `tabId`, of the site
   * `site` (the page's host). False when the page or the site has used its share.
   */
  take(tabId: number, page: string, site: string): boolean {
    const key = `${tabId} ${page}`;
    const count = this.pages.get(key) ?? 0;
    const used = this.sites.get(site) ?? 0;
    if (count >= this.perPage || used >= this.perSite) return false;
    this.pages.delete(key);
    this.pages.set(key, count + 1);
    while (this.pages.size > MAX_PAGES) this.pages.delete(this.pages.keys().next().value as string);
    this.sites.delete(site);
    this.sites.set(site, used + 1);
    while (this.sites.size > MAX_SITES) this.sites.delete(this.sites.keys().next().value as string);
    return true;
  }

  tabClosed(tabId: number): void {
    for (const key of this.pages.keys()) if (key.startsWith(`${tabId} `)) this.pages.delete(key);
  }
}
