/**
 * Chromium: installs the handoff rules (see handoff-rules.ts) and answers the handoff page. The
 * page connects with the URL it was sent for; the answer is where it goes next. When that is
 * an http:// URL, a session rule lets exactly it through once in that tab, and is removed as
 * soon as the tab's next page request finishes.
 */
import { ext } from '../platform/browser-api.js';
import { HANDOFF_PAGE, HANDOFF_SCOPE_PATH } from '../platform/packaged-files.js';
import { classifySender } from '../routing/ui-senders.js';
import type { RuleWriter } from '../dnr/rule-writer.js';
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

export interface HandoffDeps {
  /** Resolves once the engine and settings are ready. */
  inputs(tabId: number): Promise<HandoffInputs>;
  /** The page moved the tab on: statistics and the badge. */
  handedOff(tabId: number, url: string, target: string): void;
  /** How often lately exactly `fromUrl` (https://) redirected this tab's page to exactly `toUrl`. */
  downgradesSeen(tabId: number, fromUrl: string, toUrl: string): number;
}

/** The hosts the build left to the handoff page (rules/handoff.json), checked. */
export async function readHandoffScope(): Promise<HandoffScope> {
  const response = await fetch(ext.runtime.getURL(HANDOFF_SCOPE_PATH));
  return parseHandoffScope(await response.json());
}

export function installHandoff(writer: RuleWriter, deps: HandoffDeps): { syncRules(): Promise<void> } {
  /** Per tab, the one http:// URL it may load once without the handoff. */
  const once = new Map<number, string>();
  const writeOnce = () =>
    writer.setLayer(
      'handoffOnce',
      [...once].map(([tabId, url]) => handoffOnceRule(tabId, url)),
    );

  async function syncRules(): Promise<void> {
    const scope = await readHandoffScope();
    await writer.setLayer('handoff', handoffRules(scope, ext.runtime.getURL(HANDOFF_PAGE)));
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
    const inputs = await deps.inputs(tabId);
    const decision = decideHandoff(url, inputs);
    if (!decision.ok) return decision;
    if (decision.target.startsWith('https:') && looping(tabId, url as string, decision.target)) {
      await allowOnce(tabId, url as string);
      return { ok: true, target: url as string, once: true };
    }
    if (decision.once) await allowOnce(tabId, decision.target);
    deps.handedOff(tabId, url as string, decision.target);
    return decision;
  }

  ext.runtime.onConnect.addListener((port) => {
    if (port.name !== HANDOFF_PORT_NAME) return;
    // Only the handoff page itself, as the top-level page of a tab, is answered.
    const sender = classifySender(port.sender);
    const tabId = sender.page === 'handoff' && sender.tabId !== null && sender.topFrame ? sender.tabId : undefined;
    port.onMessage.addListener((msg: { url?: unknown }) => {
      void (async () => {
        let response: HandoffDecision;
        try {
          response = tabId === undefined ? { ok: false, error: 'not in a tab' } : await answer(tabId, msg?.url);
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
  return { syncRules };
}
