import { UI_PORT_NAME, type UiRequest } from '../../protocol/ui-protocol.js';
import { ext } from '../../platform/browser-api.js';

/**
 * Request/response over one long-lived port to the background. A port (not runtime.sendMessage)
 * keeps the UI's requests apart from the background's own message handler, and reconnects if
 * the service worker was stopped.
 */
export class BackgroundClient {
  private port: chrome.runtime.Port | null = null;
  private nextId = 1;
  /** Progress of long requests (a library import), sent by the background between answers. */
  readonly progressListeners = new Set<(progress: unknown) => void>();
  private readonly waiting = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; request: UiRequest }
  >();

  private connect(): chrome.runtime.Port {
    if (this.port !== null) return this.port;
    const port = ext.runtime.connect({ name: UI_PORT_NAME });
    port.onMessage.addListener((msg: { id?: number; response?: unknown; progress?: unknown }) => {
      if (msg.id === undefined) {
        if (msg.progress !== undefined) for (const l of this.progressListeners) l(msg.progress);
        return;
      }
      const w = this.waiting.get(msg.id);
      if (w === undefined) return;
      this.waiting.delete(msg.id);
      w.resolve(msg.response);
    });
    port.onDisconnect.addListener(() => {
      this.port = null;
      // Requests in flight are sent again on a fresh port (the worker restarted).
      const pending = [...this.waiting.entries()];
      this.waiting.clear();
      for (const [, w] of pending) this.request(w.request).then(w.resolve, w.reject);
    });
    this.port = port;
    return port;
  }

  request<T>(request: UiRequest): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject, request });
      this.connect().postMessage({ id, request });
    });
  }
}

export const background = new BackgroundClient();

export function isError(v: unknown): v is { error: string } {
  return (
    typeof v === 'object' && v !== null && typeof (v as { error?: unknown }).error === 'string'
  );
}
