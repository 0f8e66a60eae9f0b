/**
 * The port the extension's pages talk through (ui-protocol.ts). Each message is checked against
 * its sender first (ui-senders.ts), then routed: the library's import, the protection mode's
 * requests, and everything else to the settings controller.
 */
import { ext } from '../platform/browser-api.js';
import type { PageTickets } from '../https-first/page-tickets.js';
import { isLibraryRequest } from '../library/library-protocol.js';
import type { LibraryService } from '../library/library-service.js';
import {
  handleProtectionRequest,
  isProtectionRequest,
  type ProtectionRequestContext,
} from './protection-requests.js';
import type { SettingsController } from './settings-controller.js';
import { UI_PORT_NAME, type UiRequest } from '../protocol/ui-protocol.js';
import { classifySender, refusal } from './ui-senders.js';

export interface UiPortDeps {
  ready: Promise<SettingsController>;
  /** Tickets of the pages the background showed for one navigation (the fallback page). */
  tickets: PageTickets;
  /** The ruleset library once started. */
  library(): LibraryService | null;
  /** What the protection mode's requests reach, besides the controller. */
  protection: Omit<ProtectionRequestContext, 'controller'>;
  /** "Open over HTTP this time" may have changed (`httpOnce`, `pageRetry`): keep it for the session. */
  httpOnceChanged(c: SettingsController): Promise<void>;
}

export function listenForPages(deps: UiPortDeps): void {
  ext.runtime.onConnect.addListener((port) => {
    if (port.name !== UI_PORT_NAME) return;
    // Who is asking, as the browser says: fixed for the port's life.
    const sender = classifySender(port.sender);
    port.onMessage.addListener((msg: { id: number; request: UiRequest }) => {
      void (async () => {
        let response: unknown;
        try {
          const c = await deps.ready;
          const refused =
            typeof msg?.request?.type === 'string'
              ? refusal(sender, msg.request, deps.tickets)
              : 'not a request';
          if (refused !== null) throw new Error(refused);
          const library = deps.library();
          if (isLibraryRequest(msg.request) && library !== null)
            // Progress of an import goes to the page that asked, as messages without an id.
            response = await library.handle(msg.request, (progress) => {
              try {
                port.postMessage({ progress });
              } catch {
                // The page closed; the import goes on.
              }
            });
          else if (isProtectionRequest(msg.request))
            response = await handleProtectionRequest(msg.request, {
              ...deps.protection,
              controller: c,
            });
          else response = await c.handle(msg.request, tabUrl);
          if (
            msg.request.type === 'httpOnce' ||
            msg.request.type === 'pageRetry' ||
            msg.request.type === 'portalSignIn'
          )
            await deps.httpOnceChanged(c);
        } catch (e) {
          response = { error: String(e) };
        }
        try {
          port.postMessage({ id: msg.id, response });
        } catch {
          // The page closed before the answer.
        }
      })();
    });
  });
}

/** The tab's address as the browser says; undefined for no such tab. */
async function tabUrl(tabId: number): Promise<string | undefined> {
  try {
    return (await ext.tabs.get(tabId)).url;
  } catch {
    // No such tab (closed, or the popup was opened without one): throws synchronously for -1.
    return undefined;
  }
}
