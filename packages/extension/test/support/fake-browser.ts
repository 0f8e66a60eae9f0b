import { MemoryStorageArea } from './memory-storage.js';

/**
 * A browser namespace for running a background entry (background/firefox.ts, chromium.ts) in
 * Node: every event records its listeners so a test can fire it as the browser would; storage
 * is in memory; any other call resolves to nothing (or to no rules, for DNR's getters).
 */
export class FakeEvent {
  readonly listeners: { fn: (...args: unknown[]) => unknown; filter?: EventFilter }[] = [];
  addListener(fn: (...args: unknown[]) => unknown, filter?: EventFilter): void {
    this.listeners.push({ fn, filter });
  }
  removeListener(fn: (...args: unknown[]) => unknown): void {
    const i = this.listeners.findIndex((l) => l.fn === fn);
    if (i >= 0) this.listeners.splice(i, 1);
  }
  hasListener(fn: (...args: unknown[]) => unknown): boolean {
    return this.listeners.some((l) => l.fn === fn);
  }
  /** Calls the listeners whose webRequest filter matches `args[0]`, as the browser does. */
  fire(...args: unknown[]): unknown[] {
    const d = args[0] as { url?: string; type?: string } | undefined;
    return this.listeners.filter(({ filter }) => matches(filter, d)).map(({ fn }) => fn(...args));
  }
}

interface EventFilter {
  urls?: string[];
  types?: string[];
}

function matches(filter: EventFilter | undefined, d: { url?: string; type?: string } | undefined) {
  if (filter === undefined || d?.url === undefined) return true;
  if (filter.types !== undefined && !filter.types.includes(d.type ?? '')) return false;
  // Only the schemes' patterns the background uses ("http://*/*", "<all_urls>").
  return (filter.urls ?? []).some(
    (p) => p === '<all_urls>' || d.url!.startsWith(p.slice(0, p.indexOf('*'))),
  );
}

export interface FakeBrowser {
  ns: Record<string, unknown>;
  event(path: string): FakeEvent;
}

export function fakeBrowser(base: string): FakeBrowser {
  const events = new Map<string, FakeEvent>();
  const fixed: Record<string, unknown> = {
    'storage.local': new MemoryStorageArea(),
    'storage.session': new MemoryStorageArea(),
    'runtime.id': new URL(base).host,
    'runtime.getURL': (p: string) => `${base}${p.replace(/^\//, '')}`,
    'runtime.getManifest': () => ({ version: '0.0.0' }),
  };
  const node = (path: string): unknown => {
    const target = () => undefined;
    return new Proxy(target, {
      get(_t, name) {
        if (typeof name !== 'string' || name === 'then') return undefined;
        const at = path === '' ? name : `${path}.${name}`;
        if (at in fixed) return fixed[at];
        if (/^on[A-Z]/.test(name)) {
          let e = events.get(at);
          if (e === undefined) events.set(at, (e = new FakeEvent()));
          return e;
        }
        return node(at);
      },
      apply() {
        return Promise.resolve(/Rules$|Rulesets$|\.query$/.test(path) ? [] : undefined);
      },
    });
  };
  return {
    ns: node('') as Record<string, unknown>,
    event(path) {
      const e = events.get(path);
      if (e === undefined) throw new Error(`nothing listens to ${path}`);
      return e;
    },
  };
}
