import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SweepJob, SweepResult } from '../src/sweep/verdicts.js';
import { MAX_JOB_FIELD_BYTES, startWorker } from '../src/sweep/queue/worker.js';
import { startRedis, type TestRedis } from './support/redis-server.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const job = (key: string): SweepJob => ({
  key,
  kind: 'ruleset',
  ruleset: 'Example',
  file: 'x.xml',
  url: `http://example.com/${key}`,
  rewritten: null,
});
const answer = (j: SweepJob): SweepResult => ({
  ...j,
  verdict: 'no-rewrite',
  detail: '',
  plainStatus: null,
  secureStatus: null,
  similarity: null,
  at: Date.now(),
  ms: 0,
});

describe('sweep --queue worker: jobs BullMQ cannot parse', () => {
  it('removes a planted job whose fields are not JSON, of the wrong type or oversized, logging each once, and sweeps the rest', async () => {
    const name = 'poison';
    const queue = new Queue(name, { connection: redis.client });
    // Planted the way a client with access to Redis would: a real job, then its hash rewritten.
    const planted: Record<string, [string, string]> = {
      'bad-data': ['data', '{not json'],
      'bad-opts': ['opts', '{not json'],
      huge: ['data', JSON.stringify({ ...job('huge'), pad: 'x'.repeat(MAX_JOB_FIELD_BYTES) })],
      // Valid JSON of a type BullMQ cannot use: some throw while it takes the job, some pass
      // into its scripts; all are removed unswept.
      'opts-null': ['opts', 'null'],
      'opts-number': ['opts', '5'],
      'opts-array': ['opts', '[]'],
      'parent-null': ['parent', 'null'],
      'parent-number': ['parent', '1'],
      'parent-empty': ['parent', '{}'],
      'progress-null': ['progress', 'null'],
      'progress-string': ['progress', '"x"'],
    };
    for (const [id, [field, value]] of Object.entries(planted)) {
      await queue.add('url', job(id), { jobId: id });
      await redis.client.hset(`bull:${name}:${id}`, field, value);
    }
    for (let i = 0; i < 20; i++)
      await queue.add('url', job(`ok${i}`), { jobId: `ok${i}`, removeOnComplete: false });

    const logs: string[] = [];
    const checked: string[] = [];
    const worker = await startWorker({
      queueUrl: redis.url,
      queueName: name,
      concurrency: 2,
      lockMs: 5000,
      log: (line) => logs.push(line),
      check: async (j) => {
        checked.push(j.key);
        await sleep(10);
        return answer(j);
      },
    });
    try {
      // Well before the 5 s lock would end: nothing waits for BullMQ's stalled-job check.
      const until = Date.now() + 4000;
      let counts: Record<string, number> = {};
      while (Date.now() < until) {
        counts = await queue.getJobCounts('waiting', 'active', 'completed', 'failed');
        if (counts.completed === 20 && counts.active === 0 && counts.waiting === 0) break;
        await sleep(100);
      }
      expect(counts).toEqual({ waiting: 0, active: 0, completed: 20, failed: 0 });
      expect(checked.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `ok${i}`).sort());
      for (const id of Object.keys(planted)) expect(await queue.getJob(id)).toBeUndefined();
      // Once each, with the reason; the errors BullMQ raised on the way are not repeated.
      await sleep(300);
      const shown = logs.map((l) => l.replace(/^worker [^:]+:\d+: /, '')).sort();
      expect(shown).toEqual([
        'removed job bad-data from the queue: its data is not JSON; it cannot be swept',
        'removed job bad-opts from the queue: its options are not JSON; it cannot be swept',
        `removed job huge from the queue: its data is ${Buffer.byteLength(planted.huge?.[1] ?? '')} bytes; it cannot be swept`,
        'removed job opts-array from the queue: its options are not a JSON object; it cannot be swept',
        'removed job opts-null from the queue: its options are not a JSON object; it cannot be swept',
        'removed job opts-number from the queue: its options are not a JSON object; it cannot be swept',
        'removed job parent-empty from the queue: its parent is not a JSON object with an id and a queueKey; it cannot be swept',
        'removed job parent-null from the queue: its parent is not a JSON object with an id and a queueKey; it cannot be swept',
        'removed job parent-number from the queue: its parent is not a JSON object with an id and a queueKey; it cannot be swept',
        'removed job progress-null from the queue: its progress is not a number or a JSON object; it cannot be swept',
        'removed job progress-string from the queue: its progress is not a number or a JSON object; it cannot be swept',
      ]);
    } finally {
      await worker.close();
      await queue.close();
    }
  });
});
