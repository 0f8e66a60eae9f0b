import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpsifyFetch } from '../src/index.js';

// The wrapper's type takes the global RequestInit (Node's fetch's); every body that type allows
// must reach the server as Node's own fetch sends it, though this package's undici sends it.
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      // Each fetch draws its own multipart boundary.
      const boundary = /boundary=(.+)$/.exec(type)?.[1];
      let body = Buffer.concat(chunks).toString('latin1');
      if (boundary !== undefined) body = body.replaceAll(boundary, 'BOUNDARY');
      res.end(JSON.stringify({ type: type.replace(/boundary=.+$/, 'boundary=BOUNDARY'), body }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(() => {
  server?.close();
});

const bytes = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text);

/** Each body kind of the global BodyInit, made afresh for each fetch (a stream is read once). */
const bodies: Record<string, () => unknown> = {
  string: () => 'héllo',
  ArrayBuffer: () => bytes('array buffer').buffer,
  Uint8Array: () => bytes('bytes'),
  Float64Array: () => new Float64Array([1.5]),
  DataView: () => new DataView(bytes('data view').buffer),
  Buffer: () => Buffer.from('buffer'),
  Blob: () => new Blob(['blob'], { type: 'application/x-blob' }),
  File: () => new File(['file'], 'name.txt', { type: 'text/x-file' }),
  URLSearchParams: () => new URLSearchParams({ q: 'a b', r: 'é' }),
  FormData: () => {
    const form = new FormData();
    form.append('field', 'value');
    form.append('blob', new Blob(['blob part'], { type: 'text/plain' }), 'part.txt');
    form.append('file', new File(['file part'], 'file.bin', { type: 'application/x-bin' }));
    return form;
  },
  ReadableStream: () =>
    new ReadableStream({
      start(controller) {
        controller.enqueue(bytes('stream'));
        controller.close();
      },
    }),
  AsyncIterable: () =>
    (async function* () {
      yield bytes('async ');
      yield bytes('iterable');
    })(),
};

describe('createHttpsifyFetch with the global RequestInit', () => {
  it.each(Object.keys(bodies))("sends a %s body as Node's own fetch does", async (kind) => {
    const f = createHttpsifyFetch({ rewriter: { rewrite: () => null } });
    // duplex: Node's fetch asks for it with a stream; the global type has it in @types/node.
    const init = (): RequestInit =>
      ({ method: 'POST', body: bodies[kind]!(), duplex: 'half' }) as RequestInit;
    const ours = await (await f(url, init())).text();
    const nodes = await (await fetch(url, init())).text();
    expect(JSON.parse(ours)).toEqual(JSON.parse(nodes));
  });

  it("refuses a body over shared memory, as Node's fetch does", async () => {
    const f = createHttpsifyFetch({ rewriter: { rewrite: () => null } });
    const shared = new Uint8Array(new SharedArrayBuffer(2));
    const init = { method: 'POST', body: shared } as unknown as RequestInit;
    await expect(fetch(url, init)).rejects.toThrow(TypeError);
    await expect(f(url, init)).rejects.toThrow(TypeError);
  });

  it('sends the global Headers and honours the global AbortSignal', async () => {
    const f = createHttpsifyFetch({ rewriter: { rewrite: () => null } });
    const headers = new Headers({ 'content-type': 'text/x-mine' });
    const res = await f(url, { method: 'PUT', headers, body: 'x' });
    expect(JSON.parse(await res.text())).toEqual({ type: 'text/x-mine', body: 'x' });
    await expect(f(url, { signal: AbortSignal.abort() })).rejects.toThrow();
  });
});
