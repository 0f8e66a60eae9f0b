/**
 * Buffered stdout writer: batch jobs print hundreds of thousands of lines, and one write per
 * line would dominate their run time. Respects back-pressure so memory stays bounded.
 * Line-buffered on a terminal (a person sees each answer as it is worked out); elsewhere the
 * caller flushes whenever its input runs dry (`tail -f log | httpsify rewrite` streams).
 */
export class BufferedOutput {
  private chunks: string[] = [];
  private size = 0;

  constructor(
    private readonly stream: NodeJS.WritableStream = process.stdout,
    private readonly threshold = (stream as { isTTY?: boolean }).isTTY === true ? 0 : 1 << 16,
  ) {}

  async line(text: string): Promise<void> {
    this.chunks.push(text, '\n');
    this.size += text.length + 1;
    if (this.size >= this.threshold) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.chunks.length === 0) return;
    const data = this.take();
    if (!this.stream.write(data))
      await new Promise<void>((resolve) => this.stream.once('drain', () => resolve()));
  }

  /**
   * Hands what is buffered to the stream and calls `then` once the stream has written it and
   * everything before it: for a signal handler about to exit, so that no result already worked
   * out is lost (and none is written out of order).
   */
  flushThen(then: () => void): void {
    const data = this.take();
    if (data === '' && (this.stream as { writableLength?: number }).writableLength === 0) then();
    else this.stream.write(data, () => then());
  }

  private take(): string {
    const data = this.chunks.join('');
    this.chunks = [];
    this.size = 0;
    return data;
  }
}
