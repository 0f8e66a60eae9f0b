import WebSocket from 'ws';

/** A WebDriver BiDi command the browser answered with an error (its `error` code and message). */
export class BidiCommandError extends Error {
  constructor(
    readonly method: string,
    readonly code: string,
    message: string,
  ) {
    super(`${method}: ${code}: ${message}`);
  }
}

export interface BidiConnection {
  /** Sends one command and resolves with its `result`. */
  send<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): void;
}

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * A minimal WebDriver BiDi client: commands with numeric ids over one WebSocket, answers
 * matched by id. Events are ignored: the tests poll state instead. Every command has a
 * timeout so a browser that stops answering fails the test rather than hanging it.
 */
export async function connectBidi(url: string, commandTimeoutMs = 30_000): Promise<BidiConnection> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const pending = new Map<number, Pending>();
  let nextId = 1;

  const failAll = (error: Error) => {
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(error);
    }
    pending.clear();
  };
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as {
      id?: number;
      type: string;
      result?: unknown;
      error?: string;
      message?: string;
    };
    if (message.id === undefined) return;
    const p = pending.get(message.id);
    if (!p) return;
    pending.delete(message.id);
    clearTimeout(p.timer);
    if (message.type === 'success') p.resolve(message.result);
    else
      p.reject(
        new BidiCommandError(p.method, message.error ?? 'unknown error', message.message ?? ''),
      );
  });
  socket.on('close', () => failAll(new Error('BiDi connection closed')));
  socket.on('error', (error) => failAll(error));

  return {
    send: <T>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${method}: no answer within ${commandTimeoutMs} ms`));
        }, commandTimeoutMs);
        pending.set(id, { method, resolve: resolve as (r: unknown) => void, reject, timer });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}
