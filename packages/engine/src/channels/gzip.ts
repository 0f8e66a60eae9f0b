import { ChannelError } from './errors.js';

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** Reads a byte stream into one array, refusing to hold more than `maxBytes`. */
export async function readStreamLimited(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  what: string,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        // Stop early: a decompression bomb or a runaway download must not exhaust memory.
        await reader.cancel().catch(() => undefined);
        throw new ChannelError(
          'too-large',
          `${what} is larger than the limit of ${maxBytes} bytes`,
        );
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return concatBytes(chunks, total);
}

export function concatBytes(
  chunks: Uint8Array[],
  total = chunks.reduce((n, c) => n + c.byteLength, 0),
): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** gzip with the platform's CompressionStream (browsers and Node 20 alike). */
export async function gzipBytes(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = streamOf(bytes).pipeThrough(
    new CompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>,
  );
  return readStreamLimited(stream, Number.MAX_SAFE_INTEGER, 'compressed bundle');
}

/** gunzip with the platform's DecompressionStream; truncated or malformed input is `corrupt-bundle`. */
export async function gunzipLimited(bytes: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  const stream = streamOf(bytes).pipeThrough(
    new DecompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>,
  );
  try {
    return await readStreamLimited(stream, maxBytes, 'decompressed bundle');
  } catch (err) {
    if (err instanceof ChannelError) throw err;
    throw new ChannelError(
      'corrupt-bundle',
      `bundle is not valid gzip data: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}
