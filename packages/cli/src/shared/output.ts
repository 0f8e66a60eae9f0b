/**
 * Buffered stdout writer: batch jobs print hundreds of thousands of lines, and one write per
 * line would dominate their run time. Respects back-pressure so memory stays bounded.
 */
export class BufferedOutput {
  private chunks: string[] = [];
  private size = 0;

  constructor(
    private readonly stream: NodeJS.WritableStream = process.stdout,
    private readonly threshold = 1 << 16,
  ) {}

  async line(text: string): Promise<void> {
    this.chunks.push(text, '\n');
    this.size += text.length + 1;
    if (this.size >= this.threshold) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.chunks.length === 0) return;
    const data = this.chunks.join('');
    this.chunks = [];
    this.size = 0;
    if (!this.stream.write(data)) await new Promise<void>((resolve) => this.stream.once('drain', () => resolve()));
  }
}
