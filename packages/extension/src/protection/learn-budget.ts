/**
 * How many new third-party hosts one page, and one site, may teach the known-HTTPS-hosts store
 * (known-https-hosts.ts). A page that loads thousands of HTTPS subresources from hosts of its
 * choosing would otherwise fill the store (and the rules built from it) with them.
 */
export const NEW_HOSTS_PER_PAGE = 24;
export const NEW_HOSTS_PER_SITE = 96;
/** Sites whose counts are remembered (this session); the oldest are forgotten first. */
const MAX_SITES = 1000;

export class LearnBudget {
  /** tabId -> [the top-level page, new hosts it taught]. */
  private readonly pages = new Map<number, { page: string; count: number }>();
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
    let p = this.pages.get(tabId);
    if (p === undefined || p.page !== page) {
      p = { page, count: 0 };
      this.pages.set(tabId, p);
    }
    const used = this.sites.get(site) ?? 0;
    if (p.count >= this.perPage || used >= this.perSite) return false;
    p.count++;
    this.sites.delete(site);
    this.sites.set(site, used + 1);
    while (this.sites.size > MAX_SITES) this.sites.delete(this.sites.keys().next().value as string);
    return true;
  }

  tabClosed(tabId: number): void {
    this.pages.delete(tabId);
  }
}
