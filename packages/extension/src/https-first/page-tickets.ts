/**
 * Secrets the background puts in the address of a page it shows for one navigation (the
 * HTTPS-first fallback page). A click on such a page may relax protection for that navigation's
 * host only when the page's own address (the browser reports it with every message, the page
 * cannot choose it) carries a ticket this background issued for that tab and that URL. Nothing
 * else can show the page with a valid ticket: the secret never leaves the background and the tab.
 */
import { readFallbackPage, type FallbackPageParams } from './fallback-address.js';

/** Tickets kept per tab (the newest ones: a page reached again by "Back" still works). */
const PER_TAB = 4;
/** Tabs with tickets; the oldest tab's go first. */
const MAX_TABS = 200;

export interface Ticket {
  secret: string;
  /** The http:// URL the navigation was for. */
  url: string;
}

const SECRET = /^[0-9a-f]{32}$/;

export class PageTickets {
  private readonly byTab = new Map<number, Ticket[]>();

  constructor(
    private readonly random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b),
  ) {}

  /** A fresh ticket for the page shown in `tabId` for the navigation to `url`. */
  issue(tabId: number, url: string): string {
    const secret = [...this.random(new Uint8Array(16))]
      .map((b) => b.toString(16).padStart(2, '0'))
      .join('');
    const list = (this.byTab.get(tabId) ?? []).filter((t) => t.url !== url);
    list.push({ secret, url });
    this.byTab.delete(tabId);
    this.byTab.set(tabId, list.slice(-PER_TAB));
    while (this.byTab.size > MAX_TABS) this.byTab.delete(this.byTab.keys().next().value as number);
    return secret;
  }

  /**
   * The navigation's http:// URL when `pageUrl` (as the browser reports the sending page) holds
   * a ticket issued for this tab, and its `url` parameter is the URL the ticket was issued for.
   */
  check(tabId: number | null, pageUrl: string | null): string | null {
    if (tabId === null || pageUrl === null) return null;
    let page: FallbackPageParams;
    try {
      page = readFallbackPage(new URL(pageUrl).searchParams);
    } catch {
      return null;
    }
    const secret = page.ticket;
    if (secret === null || !SECRET.test(secret)) return null;
    const ticket = this.byTab.get(tabId)?.find((t) => t.secret === secret);
    return ticket !== undefined && ticket.url === page.url ? ticket.url : null;
  }

  dropTab(tabId: number): void {
    this.byTab.delete(tabId);
  }

  /** For storage.session: the background may be stopped while a fallback page is open. */
  snapshot(): [number, Ticket[]][] {
    return [...this.byTab];
  }

  /** Restores a snapshot; anything malformed is left out. */
  restore(raw: unknown): void {
    if (!Array.isArray(raw)) return;
    for (const entry of raw.slice(-MAX_TABS)) {
      if (!Array.isArray(entry) || !Number.isInteger(entry[0]) || !Array.isArray(entry[1]))
        continue;
      const tickets = (entry[1] as unknown[]).filter(
        (t): t is Ticket =>
          typeof t === 'object' &&
          t !== null &&
          SECRET.test(String((t as Ticket).secret)) &&
          typeof (t as Ticket).url === 'string',
      );
      if (tickets.length > 0) this.byTab.set(entry[0] as number, tickets.slice(-PER_TAB));
    }
  }
}
