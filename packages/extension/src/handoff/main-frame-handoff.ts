/**
 * Chromium: installs the handoff rules (see handoff-rules.ts) and answers the handoff page. The
 * page connects with the URL it was sent for; the answer is where it goes next. When that is
 * an http:// URL, a session rule lets exactly it through once in that tab, and is removed as
 * soon as the tab's next page request finishes.
 *
 * Mostly the page never loads: its navigation comes to this worker's fetch event first, and
 * when webRequest saw the rules send that tab's request there, the worker answers with a
 * redirect to where the page would go (issue 43: the page cost 100-150 ms a load, the redirect
 * a few). Anything else (an address no rule produced, a slow start, the same URL again at
 * once) gets the page, which asks as before.
 */
import { ext } from '../platform/browser-api.js';
import { HANDOFF_PAGE, HANDOFF_SCOPE_PATH } from '../platform/packaged-files.js';
import { classifySender } from '../routing/ui-senders.js';
import type { RuleWriter } from '../dnr/rule-writer.js';
import type { Decision } from '../decision/decide.js';
import {
  decideHandoff,
  HANDOFF_PORT_NAME,
  handoffOnceRule,
  handoffRules,
  parseHandoffScope,
  type HandoffDecision,
  type HandoffInputs,
  type HandoffScope,
} from '../dnr/handoff-rules.js';

/**
 * A loop: exactly the https:// URL the page sends the tab to answered this tab with a redirect
 * back to exactly this http:// URL this often lately (a cycle, the loop guard's evidence, see
 * loop-guard.ts), so the page would come back here again. A page that merely navigates to the
 * same URL again and again, or drives a site's open redirect to it, never gets there.
 */
const LOOP_DOWNGRADES = 2;

/** A starting worker gets the page's navigation before webRequest's redirect (5-10 ms later). */
const SIGHTING_WAIT_MS = 1000;
/** How long a navigation waits for the engine and settings before the page takes over. */
const INPUTS_WAIT_MS = 1500;
/**
 * The same URL in the same tab again this soon goes to the page: a redirect loop's rounds
 * would otherwise run inside one navigation, faster than the loop guard's evidence comes in.
 */
const REPEAT_MS = 5000;
/** Sightings are kept this long, and this many at most (each is a real top-level navigation). */
const SIGHTING_TTL_MS = 10_000;
const MAX_SIGHTINGS = 64;

/** A navigation the rules sent to the page, as webRequest reported it. */
export interface Sighting {
  tabId: number;
  /** The http:// URL exactly as the browser requested it. */
  url: string;
}

/**
 * The rules' redirects to the page, by the page address they produced (webRequest's
 * `redirectUrl`, the same string the page's navigation and its port report). Only the browser
 * fills this in, so an address found here is one a tab's own request was sent to.
 */
export class HandoffSightings {
  private readonly seen = new Map<string, Sighting & { at: number }>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly served = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  saw(pageHref: string, sighting: Sighting): void {
    this.seen.delete(pageHref);
    this.seen.set(pageHref, { ...sighting, at: this.now() });
    prune(this.seen, (s) => s.at, this.now() - SIGHTING_TTL_MS);
    for (const wake of this.waiting.get(pageHref) ?? []) wake();
    this.waiting.delete(pageHref);
  }

  /** The sighting of `pageHref` (in `tabId`, when given), if recent. */
  get(pageHref: string, tabId?: number): Sighting | undefined {
    const s = this.seen.get(pageHref);
    if (
      s === undefined ||
      s.at < this.now() - SIGHTING_TTL_MS ||
      (tabId !== undefined && s.tabId !== tabId)
    )
      return undefined;
    return { tabId: s.tabId, url: s.url };
  }

  /** The sighting of `pageHref`, waiting up to `ms` for it. */
  async wait(pageHref: string, ms: number): Promise<Sighting | undefined> {
    if (this.get(pageHref) === undefined) {
      await new Promise<void>((resolve) => {
        const wake = () => (clearTimeout(timer), resolve());
        // Given up: the waker goes too (a page may open forged addresses by the thousand).
        const timer = setTimeout(() => {
          const left = (this.waiting.get(pageHref) ?? []).filter((w) => w !== wake);
          if (left.length > 0) this.waiting.set(pageHref, left);
          else this.waiting.delete(pageHref);
          resolve();
        }, ms);
        this.waiting.set(pageHref, [...(this.waiting.get(pageHref) ?? []), wake]);
      });
    }
    return this.get(pageHref);
  }

  /** Marks the sighting answered by redirect; false when its URL was, in its tab, just now. */
  serve(s: Sighting): boolean {
    const key = `${s.tabId} ${s.url}`;
    const last = this.served.get(key);
    if (last !== undefined && last >= this.now() - REPEAT_MS) return false;
    this.served.delete(key);
    this.served.set(key, this.now());
    prune(this.served, (at) => at, this.now() - REPEAT_MS);
    return true;
  }
}

/** Drops entries older than `before` and the oldest beyond MAX_SIGHTINGS (insertion order is age). */
function prune<V>(map: Map<string, V>, at: (v: V) => number, before: number): void {
  for (const [key, value] of map) {
    if (at(value) >= before && map.size <= MAX_SIGHTINGS) break;
    map.delete(key);
  }
}

export interface HandoffDeps {
  /** Resolves once the engine and settings are ready. */
  inputs(tabId: number): Promise<HandoffInputs>;
  /** The page moved the tab on, as `decision` says: statistics, the badge, the fallback. */
  handedOff(tabId: number, url: string, target: string, decision: Decision): void;
  /** How often lately exactly `fromUrl` (https://) redirected this tab's page to exactly `toUrl`. */
  downgradesSeen(tabId: number, fromUrl: string, toUrl: string): number;
}

/** The hosts the build left to the handoff page (rules/handoff.json), checked. */
export async function readHandoffScope(): Promise<HandoffScope> {
  const response = await fetch(ext.runtime.getURL(HANDOFF_SCOPE_PATH));
  return parseHandoffScope(await response.json());
}

export interface InstalledHandoff {
  syncRules(): Promise<void>;
  /**
   * The worker's fetch event for `request`: a redirect (or, declined, the page itself) when it
   * is a top-level navigation to the page; null for every other request.
   */
  navigation(request: Request): Promise<Response> | null;
}

export function installHandoff(writer: RuleWriter, deps: HandoffDeps): InstalledHandoff {
  const pageUrl = ext.runtime.getURL(HANDOFF_PAGE);
  const sightings = new HandoffSightings();
  /** Per tab, the one http:// URL it may load once without the handoff. */
  const once = new Map<number, string>();
  const writeOnce = () =>
    writer.setLayer(
      'handoffOnce',
      [...once].map(([tabId, url]) => handoffOnceRule(tabId, url)),
    );

  // A worker that starts knows of no pending "once": rules left from before it stopped (their
  // page may have loaded since, and nothing would remove them) go at once, so that no tab keeps
  // an http:// URL allowed past what decide() says now.
  writeOnce().catch((e: unknown) => console.error('httpsify: old handoff allowances kept', e));

  async function syncRules(): Promise<void> {
    const scope = await readHandoffScope();
    await writer.setLayer('handoff', handoffRules(scope, pageUrl));
    // Left over from before a restart: the tabs they were for have moved on.
    if (once.size === 0) await writeOnce();
  }

  /** The URL the page sends the tab to keeps answering with a redirect back to exactly this URL. */
  function looping(tabId: number, url: string, target: string): boolean {
    return deps.downgradesSeen(tabId, target, url) >= LOOP_DOWNGRADES;
  }

  async function allowOnce(tabId: number, url: string): Promise<void> {
    once.set(tabId, url);
    await writeOnce();
  }

  async function forgetOnce(tabId: number): Promise<void> {
    if (!once.delete(tabId)) return;
    await writeOnce();
  }

  async function answer(tabId: number, url: unknown): Promise<HandoffDecision> {
    return answerWith(await deps.inputs(tabId), tabId, url);
  }

  async function answerWith(
    inputs: HandoffInputs,
    tabId: number,
    url: unknown,
  ): Promise<HandoffDecision> {
    // The one decision for this navigation: what the answer follows is what handedOff is told.
    let made: Decision = { action: 'leave', reason: 'no-rule' };
    const decision = decideHandoff(url, { decide: (u) => (made = inputs.decide(u)) });
    if (!decision.ok) return decision;
    if (decision.target.startsWith('https:') && looping(tabId, url as string, decision.target)) {
      await allowOnce(tabId, url as string);
      return { ok: true, target: url as string, once: true };
    }
    if (decision.once) await allowOnce(tabId, decision.target);
    deps.handedOff(tabId, url as string, decision.target, made);
    return decision;
  }

  /** Where the rules' redirect of a tab's request to `pageHref` goes; null: leave it to the page. */
  async function redirectTarget(pageHref: string): Promise<string | null> {
    const seen = await sightings.wait(pageHref, SIGHTING_WAIT_MS);
    if (seen === undefined || !sightings.serve(seen)) return null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>(
      (resolve) => (timer = setTimeout(() => resolve(null), INPUTS_WAIT_MS)),
    );
    const inputs = await Promise.race([deps.inputs(seen.tabId), late]);
    clearTimeout(timer);
    if (inputs === null) return null;
    const decision = await answerWith(inputs, seen.tabId, seen.url);
    return decision.ok ? decision.target : null;
  }

  function navigation(request: Request): Promise<Response> | null {
    // Top-level GET navigations to the page in the rules' form; frames and forms get the page.
    if (
      request.mode !== 'navigate' ||
      request.destination !== 'document' ||
      request.method !== 'GET'
    )
      return null;
    if (!request.url.startsWith(`${pageUrl}?`)) return null;
    return (async () => {
      const target = await redirectTarget(request.url).catch(
        (e: unknown) => (console.error('httpsify: handoff', e), null),
      );
      return target === null ? fetch(request) : Response.redirect(target, 302);
    })();
  }

  // Recorded before the tab's navigation reaches the page (or the worker's fetch event).
  ext.webRequest.onBeforeRedirect.addListener(
    (d) => {
      if (d.tabId >= 0 && d.redirectUrl.startsWith(`${pageUrl}?`))
        sightings.saw(d.redirectUrl, { tabId: d.tabId, url: d.url });
    },
    { urls: ['http://*/*'], types: ['main_frame'] },
  );

  ext.runtime.onConnect.addListener((port) => {
    if (port.name !== HANDOFF_PORT_NAME) return;
    // Only the handoff page itself, as the top-level page of a tab, is answered.
    const sender = classifySender(port.sender);
    const tabId =
      sender.page === 'handoff' && sender.tabId !== null && sender.topFrame
        ? sender.tabId
        : undefined;
    // The URL as the browser requested it when the rules sent this tab here (the page's address
    // escapes a few characters the URL had as they were); else what the page read.
    const seen =
      tabId === undefined || sender.url === null ? undefined : sightings.get(sender.url, tabId);
    port.onMessage.addListener((msg: { url?: unknown }) => {
      void (async () => {
        let response: HandoffDecision;
        try {
          response =
            tabId === undefined
              ? { ok: false, error: 'not in a tab' }
              : await answer(tabId, seen?.url ?? msg?.url);
        } catch (e) {
          response = { ok: false, error: String(e) };
        }
        try {
          port.postMessage(response);
        } catch {
          // The tab closed before the answer.
        }
      })();
    });
  });
  const done = (d: { tabId: number; type: string }) => {
    if (d.type === 'main_frame') void forgetOnce(d.tabId);
  };
  ext.webRequest.onCompleted.addListener(done, { urls: ['http://*/*'], types: ['main_frame'] });
  ext.webRequest.onErrorOccurred.addListener(done, { urls: ['http://*/*'], types: ['main_frame'] });
  ext.tabs.onRemoved.addListener((tabId) => void forgetOnce(tabId));
  return { syncRules, navigation };
}
