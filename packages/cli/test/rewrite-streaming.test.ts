import { describe, expect, it } from 'vitest';
import { startCli } from './support/run-cli.js';

/** A `httpsify rewrite` child fed by hand through a pipe. */
const child = (args: string[] = []) => startCli(['rewrite', '--no-channels', ...args]);

describe('batch rewrite streams', () => {
  it('answers each line as it arrives when the input is slow (tail -f | httpsify rewrite)', async () => {
    const c = child();
    c.proc.stdin.write('http://www.eff.org/one\n');
    // Only the first line has been sent and stdin stays open: its answer must come out now.
    await c.until(() => c.stdout() === 'https://www.eff.org/one\n');
    c.proc.stdin.write('http://example.invalid/two\nhttp://www.eff.org/thr');
    await c.until(() => c.stdout().endsWith('http://example.invalid/two\n'));
    // A half-written line waits for the rest of it.
    expect(c.stdout()).toBe('https://www.eff.org/one\nhttp://example.invalid/two\n');
    c.proc.stdin.end('ee\r\n');
    const { status } = await c.exited;
    expect(status).toBe(0);
    expect(c.stdout()).toBe(
      'https://www.eff.org/one\nhttp://example.invalid/two\nhttps://www.eff.org/three\n',
    );
  });

  it('on SIGINT keeps every answer already worked out and exits 130', async () => {
    const c = child(['--format', 'jsonl']);
    c.proc.stdin.write('http://www.eff.org/a\nhttp://www.eff.org/b\n');
    await c.until(() => c.stdout().split('\n').length === 3);
    c.proc.kill('SIGINT');
    const { status } = await c.exited;
    expect(status).toBe(130);
    expect(
      c
        .stdout()
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { rewritten: string }).rewritten),
    ).toEqual(['https://www.eff.org/a', 'https://www.eff.org/b']);
  });

  it('on SIGTERM in the middle of a burst writes whole answers, in order, and exits 143', async () => {
    const c = child();
    const urls = Array.from({ length: 20_000 }, (_, i) => `http://www.eff.org/${i}`);
    c.proc.stdin.write(urls.join('\n') + '\n');
    await c.until(() => c.stdout().length > 0);
    c.proc.kill('SIGTERM');
    const { status } = await c.exited;
    expect(status).toBe(143);
    const lines = c.stdout().split('\n');
    expect(lines.pop()).toBe(''); // ends with a whole line
    expect(lines).toEqual(urls.slice(0, lines.length).map((u) => u.replace('http:', 'https:')));
  });

  it('on SIGTERM with a reader that is not keeping up, still delivers every answer it buffered', async () => {
    const c = child();
    c.proc.stdout.pause();
    const urls = Array.from(
      { length: 40_000 },
      (_, i) => `http://www.eff.org/${'p'.repeat(i % 50)}${i}`,
    );
    c.proc.stdin.write(urls.join('\n') + '\n');
    // Its answers fill the pipe (64 KB) and the rest waits in the child: wait until it blocks.
    await c.until(() => c.proc.stdout.readableLength > 0);
    c.proc.kill('SIGTERM');
    c.proc.stdout.resume();
    const { status } = await c.exited;
    expect(status).toBe(143);
    const lines = c.stdout().split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).toEqual(urls.slice(0, lines.length).map((u) => u.replace('http:', 'https:')));
  });

  it('names invalid lines on stderr and exits 1; refuses binary input with exit 2', async () => {
    const c = child();
    c.proc.stdin.end('http://www.eff.org/\nnot a url\n\n');
    const { status, stderr } = await c.exited;
    expect(c.stdout()).toBe('https://www.eff.org/\nnot a url\n\n');
    expect(stderr).toBe('httpsify: line 2: not a valid URL: "not a url"\n');
    expect(status).toBe(1);
    const b = child();
    b.proc.stdin.end(Buffer.from([0x68, 0x74, 0x00, 0xff, 0x0a]));
    const binary = await b.exited;
    expect(binary.stderr).toContain('stdin is binary');
    expect(binary.status).toBe(2);
  });
});
