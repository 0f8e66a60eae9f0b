/**
 * Mutual exclusion for read-modify-write of settings. Extension pages and the background share
 * an origin, so the Web Locks API serialises them across windows; where it is missing (Node,
 * old browsers) a per-realm promise chain still serialises writers within one context.
 */
export type LockFn = <T>(name: string, task: () => Promise<T>) => Promise<T>;

const chains = new Map<string, Promise<unknown>>();

export const localLock: LockFn = (name, task) => {
  const previous = chains.get(name) ?? Promise.resolve();
  const run = previous.then(task, task);
  // The chain must continue after a failed task.
  chains.set(
    name,
    run.catch(() => undefined),
  );
  return run;
};

interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

export function defaultLock(): LockFn {
  const locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  if (locks === undefined) return localLock;
  return (name, task) => locks.request(name, task);
}
