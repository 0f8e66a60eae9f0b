/**
 * decide() for a request as webRequest reports it: the settings and learned state of this
 * moment, and the tab's top-level page as the background last saw it (a subresource's site
 * switches are the page's). Every decision the background makes for a request comes here.
 */
import { decide, type Decision } from './decide.js';
import { decisionState, type DecisionSources } from './state.js';

export interface RequestDetails {
  url: string;
  /** webRequest's resource type: `main_frame` is a navigation, anything else a subresource. */
  type: string;
  tabId: number;
}

export class RequestDecider {
  /** Per tab, the address of its last top-level request. */
  private readonly topUrls = new Map<number, string>();

  /** `knownHttps`: the host is in the known-HTTPS-hosts store at `now`. */
  constructor(private readonly knownHttps: (host: string, now: number) => boolean) {}

  decide(sources: DecisionSources, d: RequestDetails): Decision {
    const now = Date.now();
    const navigation = d.type === 'main_frame';
    return decide({
      url: d.url,
      kind: navigation ? 'navigation' : 'subresource',
      tab: { tabId: d.tabId, topUrl: navigation ? d.url : this.topUrls.get(d.tabId) },
      state: decisionState(sources, (host) => this.knownHttps(host, now)),
    });
  }

  /** A top-level request started in the tab. */
  navigated(tabId: number, url: string): void {
    this.topUrls.set(tabId, url);
  }

  topUrl(tabId: number): string | undefined {
    return this.topUrls.get(tabId);
  }

  tabClosed(tabId: number): void {
    this.topUrls.delete(tabId);
  }
}
