import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { TestPki } from './fetch-test-servers.js';

export interface DualServer {
  /** One port on 127.0.0.1 that speaks plain HTTP and HTTPS (by the first byte a client sends). */
  port: number;
  /** `http://host:port/path` or `https://…` of every request served, in order. */
  requests: string[];
  close(): Promise<void>;
}

export type Handler = (
  req: { scheme: 'http' | 'https'; host: string; path: string },
  res: ServerResponse,
) => void;

/**
 * http://host:P/ and https://host:P/ on the same port P, as on a real site's 80 and 443, so a
 * client that upgrades by changing only the scheme can be tested with a port chosen at run time.
 */
export async function startDualServer(pki: TestPki, handle: Handler): Promise<DualServer> {
  const requests: string[] = [];
  const serve = (scheme: 'http' | 'https') => (req: IncomingMessage, res: ServerResponse) => {
    const hostHeader = req.headers.host ?? '';
    requests.push(`${scheme}://${hostHeader}${req.url ?? '/'}`);
    handle({ scheme, host: hostHeader.replace(/:\d+$/, ''), path: req.url ?? '/' }, res);
  };
  const http = createHttpServer(serve('http'));
  const https = createHttpsServer({ key: pki.key, cert: pki.cert }, serve('https'));
  const front = createNetServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      // 0x16: a TLS handshake record. TLS reads a net.Socket's handle directly, past anything
      // put back with unshift(), so the TLS side gets a stream that replays the first chunk.
      const target = first[0] === 0x16 ? https : http;
      socket.pause();
      target.emit('connection', replaying(socket, first));
    });
  });
  const port = await new Promise<number>((resolve) =>
    front.listen(0, '127.0.0.1', () => resolve((front.address() as AddressInfo).port)),
  );
  return {
    port,
    requests,
    close: async () => {
      http.closeAllConnections();
      https.closeAllConnections();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}

/** A duplex over `socket` whose readable side starts with `first` (already read from the socket). */
function replaying(socket: Socket, first: Buffer): Duplex {
  const stream = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      socket.write(chunk, callback);
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(err, callback) {
      socket.destroy();
      callback(err);
    },
  });
  stream.push(first);
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.on('end', () => stream.push(null));
  socket.on('close', () => stream.destroy());
  return stream;
}
