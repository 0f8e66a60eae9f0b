/**
 * The one door for who may ask the background what (every `runtime.onConnect` port and
 * `runtime.onMessage` handler goes through here). The browser fills in the sender: the page's
 * own address, its tab and its frame; a page cannot choose them.
 *
 * - Only this extension's own pages are answered, and only as the top frame of their tab (or
 *   the popup): a framed extension page is a click-jacking risk, so it is refused.
 * - The popup and the options page are opened by the user; they may ask everything.
 * - Pages a website can make the browser show (the handoff page, behind a DNR redirect any
 *   http:// navigation may trigger) or that the background shows for one navigation (the
 *   fallback page) may relax protection only for that navigation: the fallback page's address
 *   must carry a ticket the background issued for that tab and URL (page-tickets.ts), and the
 *   change is limited to that URL's host.
 */
import { ext } from '../platform/browser-api.js';
import {
  FALLBACK_PAGE,
  HANDOFF_PAGE,
  OPTIONS_PAGE,
  POPUP_PAGE,
} from '../platform/packaged-files.js';
import type { PageTickets } from '../https-first/page-tickets.js';
import type { UiRequest } from '../protocol/ui-protocol.js';

export type ExtensionPage = 'popup' | 'options' | 'fallback' | 'handoff';

const PAGES: Record<string, ExtensionPage> = {
  [POPUP_PAGE]: 'popup',
  [OPTIONS_PAGE]: 'options',
  [FALLBACK_PAGE]: 'fallback',
  [HANDOFF_PAGE]: 'handoff',
};

export interface UiSender {
  /** Which of our pages sent it; null: not one of ours (another extension, a web page, unknown). */
  page: ExtensionPage | null;
  /** The sending page's address as the browser reports it. */
  url: string | null;
  tabId: number | null;
  /** The page is its tab's top-level document (or the popup, which has no tab). */
  topFrame: boolean;
}

interface SenderLike {
  id?: string;
  url?: string;
  tab?: { id?: number };
  frameId?: number;
}

export function classifySender(
  sender: SenderLike | undefined,
  ownId: string = ext.runtime.id,
  ownBase: string = ext.runtime.getURL(''),
): UiSender {
  const none: UiSender = { page: null, url: null, tabId: null, topFrame: false };
  if (
    sender === undefined ||
    sender.id !== ownId ||
    typeof sender.url !== 'string' ||
    !sender.url.startsWith(ownBase)
  )
    return none;
  let path: string;
  try {
    const u = new URL(sender.url);
    // Not `origin`: non-special schemes have none outside browsers; the userinfo must be empty.
    if (`${u.protocol}//${u.host}/` !== ownBase || u.username !== '' || u.password !== '')
      return none;
    path = u.pathname.replace(/^\/+/, '');
  } catch {
    return none;
  }
  const page = PAGES[path] ?? null;
  const tabId = typeof sender.tab?.id === 'number' && sender.tab.id >= 0 ? sender.tab.id : null;
  const topFrame = (sender.frameId ?? 0) === 0;
  return { page, url: sender.url, tabId, topFrame };
}

/** What the fallback page may ask besides relaxing protection for its own navigation. */
const FALLBACK_READS = new Set<string>(['settings', 'about']);

function hostOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.host : null;
  } catch {
    return null;
  }
}

/**
 * Null when `sender` may make `request`, else why not (sent back as `{ error }`). `tickets`
 * answers for the fallback page's address.
 */
export function refusal(sender: UiSender, request: UiRequest, tickets: PageTickets): string | null {
  if (sender.page === null) return 'not an httpsify page';
  if (!sender.topFrame) return 'httpsify pages do not answer inside frames';
  if (sender.page === 'popup' || sender.page === 'options') return null;
  if (sender.page === 'handoff') return 'the handoff page only asks where to go';
  // The fallback page: reads, and the HTTP choices for its own navigation's host.
  if (FALLBACK_READS.has(request.type)) return null;
  const ticketed = tickets.check(sender.tabId, sender.url);
  if (ticketed === null) return 'this page was not opened by httpsify for this tab';
  const host = hostOf(ticketed);
  switch (request.type) {
    case 'httpOnce':
      if (request.tabId !== undefined && request.tabId !== sender.tabId)
        return 'not the tab this page is in';
      return typeof request.url === 'string' && hostOf(request.url) === host
        ? null
        : 'not the address this page is for';
    case 'portalSignIn':
      return null;
    case 'siteAdd':
      return request.list === 'httpAllowedSites' && request.entry === host
        ? null
        : 'not the site this page is for';
    case 'siteState':
      return request.state === 'rulesets' && request.entry === host
        ? null
        : 'not the site this page is for';
    default:
      return `the fallback page cannot ask for ${String(request.type)}`;
  }
}

/** `runtime.onMessage` (tests, DevTools): only the popup and options page, as top frames. */
export function messageAllowed(sender: UiSender): boolean {
  return sender.topFrame && (sender.page === 'popup' || sender.page === 'options');
}
