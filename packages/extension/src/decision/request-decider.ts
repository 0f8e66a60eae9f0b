/**
 * decide() for a request as webRequest reports it: the settings and learned state of this
 * moment (a snapshot, decision/snapshot.ts), and the page the request belongs to (a subresource's site switches are its page's).
 * Every decision the background makes for a request comes here.
 *
 * The page is the request's own: Firefox names it in the request (`frameAncestors`,
 * `documentUrl`); otherwise it is the tab's last *committed* top-level document. A navigation
 * that was only started (and stopped, or answered with a 204, or still on its way) changes
 * nothing another request sees: a page cannot borrow another site's setting by starting a
 * navigation to it.
 */
import { decide, type Decision } from './decide.js';
import { snapshotState, type ProtectionSnapshot } from './snapshot.js';

export interface RequestDetails {
  url: string;
  /** webRequest's resource type: `main_frame` is a navigation, anything else a subresource. */
  type: string;
  tabId: number;
  /** Firefox: the document that made the request. */
  documentUrl?: string;
  /** Firefox: the frames above the requesting document, the top-level one last. */
  frameAncestors?: { url: string }[];
  /** The requesting frame (0: the top-level document). */
  frameId?: number;
}

/**
 * The top-level document a request belongs to, as the request itself tells (Firefox), or
 * undefined when it does not (Chromium; workers).
 */
export function requestPage(d: RequestDetails): string | undefined {
  if (d.type === 'main_frame') return d.url;
  const ancestors = d.frameAncestors;
  if (Array.isArray(ancestors) && ancestors.length > 0) {
    const top = ancestors[ancestors.length - 1]?.url;
    if (typeof top === 'string') return top;
  }
  // No ancestors: the requesting document is the top-level one.
  if ((Array.isArray(ancestors) || d.frameId === 0) && typeof d.documentUrl === 'string')
    return d.documentUrl;
  return undefined;
}

/** Statuses after which a navigation's response becomes the tab's document (not 204/205, no redirect). */
export function commitsDocument(statusCode: number | undefined): boolean {
  const s = statusCode ?? 0;
  return s >= 200 && s !== 204 && s !== 205 && !(s >= 300 && s < 400);
}

export class RequestDecider {
  /** Per tab, the address of its last committed top-level document. */
  private readonly topUrls = new Map<number, string>();

  /** `knownHttps`: the host is in the known-HTTPS-hosts store at `now`. */
  constructor(private readonly knownHttps: (host: string, now: number) => boolean) {}

  decide(snapshot: ProtectionSnapshot, d: RequestDetails): Decision {
    const now = Date.now();
    const navigation = d.type === 'main_frame';
    return decide({
      url: d.url,
      kind: navigation ? 'navigation' : 'subresource',
      tab: { tabId: d.tabId, topUrl: this.pageOf(d) },
      state: snapshotState(snapshot, (host) => this.knownHttps(host, now)),
    });
  }

  /** The top-level page of the request: its own word, else the tab's committed document. */
  pageOf(d: RequestDetails): string | undefined {
    return requestPage(d) ?? (d.tabId >= 0 ? this.topUrls.get(d.tabId) : undefined);
  }

  /**
   * A top-level document's response started in the tab (webRequest.onResponseStarted of a
   * `main_frame`): with a status that commits a document, it is the tab's page from now on.
   */
  committed(d: { tabId: number; type: string; url: string; statusCode?: number }): void {
    if (d.type !== 'main_frame' || d.tabId < 0 || !commitsDocument(d.statusCode)) return;
    this.topUrls.set(d.tabId, d.url);
  }

  /** The tab's last committed top-level document. */
  topUrl(tabId: number): string | undefined {
    return this.topUrls.get(tabId);
  }

  tabClosed(tabId: number): void {
    this.topUrls.delete(tabId);
  }
}
