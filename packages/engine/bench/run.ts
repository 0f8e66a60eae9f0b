/**
 * `npm run bench`: compile the full 2018 corpus, then measure load time, heap and per-URL rewrite
 * cost in a fresh process (so parsing garbage does not pollute the heap figures), with the cost
 * of `new URL()` on the same URLs as the yardstick. Prints one JSON object and a table.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { compileBundle, loadBundle, type Ruleset } from '../src/index.js';
import { checkRulesetRegexes, judgeRegex, parseRulesetXml } from '../src/parse/index.js';
import { Form, prepareRule, prepareTest } from '../src/regex/prepared-pattern.js';
import { listRulesetFiles } from '../src/node/index.js';
import { applyDelta, makeDelta } from '../src/channels/index.js';
import { corpusRulesDir, readOracle } from '../test/support/corpus.js';
import { oneShotFigure } from '../../cli/bench/one-shot.js';

interface Stats {
  mean: number;
  p50: number;
  p99: number;
  max: number;
  count: number;
}

function stats(samples: Float64Array, mean: number): Stats {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return {
    mean,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted[sorted.length - 1] as number,
    count: sorted.length,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

function heapMb(): number {
  // Two collections: the first may only schedule finalisation of what the second frees.
  (globalThis as { gc?: () => void }).gc?.();
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

/** Mean µs per call over whole passes (no timer per call), best of `passes`. */
function meanOf(urls: readonly string[], fn: (u: string) => unknown, passes = 5): number {
  let best = Infinity;
  let sink = 0;
  for (let p = 0; p < passes; p++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < urls.length; i++) if (fn(urls[i] as string) !== null) sink++;
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1000 / urls.length);
  }
  if (sink < 0) console.log(sink);
  return best;
}

/** Per-call µs, timer overhead subtracted, for the percentiles. */
function perCall(urls: readonly string[], fn: (u: string) => unknown): Float64Array {
  const out = new Float64Array(urls.length);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 1000; i++) process.hrtime.bigint();
  const overhead = Number(process.hrtime.bigint() - t0) / 1000 / 1001;
  for (let i = 0; i < urls.length; i++) {
    const s = process.hrtime.bigint();
    fn(urls[i] as string);
    out[i] = Math.max(0, Number(process.hrtime.bigint() - s) / 1000 - overhead);
  }
  return out;
}

/** XOR of every character code of `u`; never null, so meanOf counts it like a result. */
function readEveryChar(u: string): number {
  let x = 0;
  for (let i = 0; i < u.length; i++) x ^= u.charCodeAt(i);
  return x;
}

async function measure(bundlePath: string): Promise<Record<string, unknown>> {
  const urls = (await readOracle()).map((c) => c.url);
  // Only the URL strings stay reachable, but the oracle records stay alive until this task
  // ends; the baseline must not include them, or whether they are freed before the last figure
  // decides that figure.
  await new Promise((resolve) => setImmediate(resolve));
  const heapBefore = heapMb();
  const bytes = new Uint8Array(readFileSync(bundlePath));
  const heapWithBytes = heapMb();
  const loads: number[] = [];
  let engine = loadBundle(bytes);
  for (let i = 0; i < 20; i++) {
    const start = performance.now();
    engine = loadBundle(bytes);
    loads.push(performance.now() - start);
  }
  const trustedLoads: number[] = [];
  for (let i = 0; i < 20; i++) {
    const start = performance.now();
    // As the extension loads its packaged defaults (background/engine-loader.ts).
    engine = loadBundle(bytes, { verify: 'trusted', trustBundledRegexVerdicts: true });
    trustedLoads.push(performance.now() - start);
  }
  const heapAfterLoad = heapMb();
  // First pass: compiles the regexes the URLs need (lazily, once). Measured before the hit and
  // miss lists below exist, so the heap figure is the engine's own.
  let rewritten = 0;
  for (const url of urls) if (engine.rewrite(url) !== null) rewritten++;
  const heapAfterAll = heapMb();
  const hits: string[] = [];
  const misses: string[] = [];
  for (const url of urls) (engine.rewrite(url) === null ? misses : hits).push(url);
  if (hits.length !== rewritten) throw new Error('rewrite is not deterministic');
  let parsed = 0;
  const newUrl = (u: string) => {
    parsed++;
    return new URL(u);
  };
  const result = {
    loadMsMedian: median(loads),
    loadTrustedMsMedian: median(trustedLoads),
    heapMb: {
      baseline: heapBefore,
      bundleBytesInHeap: heapWithBytes - heapBefore,
      afterLoad: heapAfterLoad - heapBefore,
      afterAllUrls: heapAfterAll - heapBefore,
      externalArrayBuffersMb: process.memoryUsage().arrayBuffers / 2 ** 20,
    },
    urls: urls.length,
    rewriteUs: {
      all: stats(
        perCall(urls, (u) => engine.rewrite(u)),
        meanOf(urls, (u) => engine.rewrite(u)),
      ),
      hits: stats(
        perCall(hits, (u) => engine.rewrite(u)),
        meanOf(hits, (u) => engine.rewrite(u)),
      ),
      misses: stats(
        perCall(misses, (u) => engine.rewrite(u)),
        meanOf(misses, (u) => engine.rewrite(u)),
      ),
    },
    newUrlUs: stats(perCall(urls, newUrl), meanOf(urls, newUrl)),
    // A floor no JS matcher can go below: reading each URL's characters once (V8's charCodeAt).
    charReadUs: meanOf(urls, readEveryChar),
    // Browsing is mostly hosts no ruleset covers: the oracle URLs with their host moved under a
    // domain no ruleset targets (synthetic; shows the cost of the common case).
    uncoveredUs: (() => {
      const uncovered = urls.map((u, i) =>
        u.replace(/^(https?:\/\/)([^/:?#]+)/, `$1$2.uncovered-example${i % 97}.net`),
      );
      if (uncovered.some((u) => engine.rewrite(u) !== null))
        throw new Error('an uncovered URL was rewritten');
      return stats(
        perCall(uncovered, (u) => engine.rewrite(u)),
        meanOf(uncovered, (u) => engine.rewrite(u)),
      );
    })(),
    newUrlUncoveredUs: (() => {
      const uncovered = urls.map((u, i) =>
        u.replace(/^(https?:\/\/)([^/:?#]+)/, `$1$2.uncovered-example${i % 97}.net`),
      );
      return stats(perCall(uncovered, newUrl), meanOf(uncovered, newUrl));
    })(),
  };
  if (parsed === 0) throw new Error('yardstick did not run');
  return result;
}

/** Cold-start figures: medians over fresh processes, in ms. */
interface ColdStart {
  wallMs: number;
  cpuMs: number;
  importMs: number;
  loadMs: number;
  rewriteMs: number;
  importCpuMs: number;
  loadCpuMs: number;
  rewriteCpuMs: number;
  rewritten: unknown;
}

/**
 * The URLs a cold process rewrites first: one whose rule is a finite language (most corpus
 * rules: no regex at all), and one whose rule needs a real regex, which the regex door must
 * judge (analysis, then RegExp) before it runs.
 */
const COLD_URLS = {
  finite: { url: 'http://gobby.0x539.de/download', expected: 'https://gobby.github.io/' },
  regex: {
    url: 'http://ss1.4sqi.net/img/devsite/fs8_f.png',
    expected: 'https://ss1.4sqi.net/img/devsite/fs8_f.png',
  },
  // A library we did not build (`httpsify compile`, no verdicts): Google's host goes through
  // "Google.com Subdomains (Complex)" (6 regex rules, 2 regex exclusions) before "Google";
  // maps.google.com then needs the door's verdict on Google.tld's alternation.
  foreign: {
    url: 'http://www.google.com/search?q=httpsify',
    expected: 'https://www.google.com/search?q=httpsify',
  },
  foreignJudged: {
    url: 'http://maps.google.com/maps?q=paris',
    expected: 'https://maps.google.com/maps?q=paris',
  },
} as const;

type ColdKind = keyof typeof COLD_URLS | 'regexJudged';

/**
 * What a fresh process pays before its first answer (an MV3 service worker restarted after 30 s
 * idle, a CLI call): import the main entry, read the bundle and load it as trusted bytes,
 * rewrite one URL. Each run is a new `node` on the compiled package (not tsx), measured inside
 * it from before the import; wall time, and CPU time, which a loaded machine disturbs less.
 * The floor is the same process without our code: importing a one-line package by name (Node's
 * own first ESM import and package resolution) and reading the bundle. `node -e ''` alone is timed as well, to show Node's own start.
 */
function coldStart(
  bundlePath: string,
  foreignPath: string,
  runs = 21,
): Record<ColdKind, ColdStart> & { floorWallMs: number; floorCpuMs: number; nodeAloneMs: number } {
  // The packaged defaults' load: their regex verdicts were worked out when the bundle was built.
  // `judged` is the load of any other bundle (a channel's, --rules): the door judges each pattern.
  const script = (url: string, judged = false, path = bundlePath) => `
    const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
    const c0 = cpu(), t0 = performance.now();
    const { loadBundle } = await import('@httpsify/engine');
    const { readFileSync } = await import('node:fs');
    const t1 = performance.now(), c1 = cpu();
    const engine = loadBundle(readFileSync(${JSON.stringify(path)}), { verify: 'trusted', trustBundledRegexVerdicts: ${!judged} });
    const t2 = performance.now(), c2 = cpu();
    const rewritten = engine.rewrite(${JSON.stringify(url)});
    const t3 = performance.now(), c3 = cpu();
    process.stdout.write(JSON.stringify({ wallMs: t3 - t0, cpuMs: c3 - c0, importMs: t1 - t0, loadMs: t2 - t1, rewriteMs: t3 - t2,
      importCpuMs: c1 - c0, loadCpuMs: c2 - c1, rewriteCpuMs: c3 - c2, rewritten }));`;
  // The floor imports a one-line package by name, as the engine is, so it pays Node's package
  // resolution (node_modules, package.json exports) too.
  const floorDir = join(dirname(bundlePath), 'floor');
  mkdirSync(join(floorDir, 'node_modules', 'floor-package'), { recursive: true });
  writeFileSync(
    join(floorDir, 'node_modules', 'floor-package', 'package.json'),
    JSON.stringify({
      name: 'floor-package',
      type: 'module',
      exports: { '.': { node: './index.js', default: './index.js' } },
    }),
  );
  writeFileSync(
    join(floorDir, 'node_modules', 'floor-package', 'index.js'),
    'export const floor = 1;\n',
  );
  const floorScript = `
    const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
    const c0 = cpu(), t0 = performance.now();
    await import('floor-package');
    const { readFileSync } = await import('node:fs');
    const bytes = readFileSync(${JSON.stringify(bundlePath)});
    const t1 = performance.now(), c1 = cpu();
    process.stdout.write(JSON.stringify({ floorWallMs: t1 - t0, floorCpuMs: c1 - c0, bytes: bytes.length }));`;
  const run = (code: string, cwd = join(dirname(fileURLToPath(import.meta.url)), '..')) => {
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
      cwd,
      encoding: 'utf8',
    });
    if (child.status !== 0) throw new Error(`cold-start process failed: ${child.stderr}`);
    return JSON.parse(child.stdout) as Record<string, number> & { rewritten: unknown };
  };
  const samples: Record<ColdKind | 'floor', Record<string, unknown>[]> = {
    finite: [],
    regex: [],
    regexJudged: [],
    foreign: [],
    foreignJudged: [],
    floor: [],
  };
  const nodeAlone: number[] = [];
  // Interleaved, so a burst of load on the machine hits every kind of run alike.
  for (let i = 0; i < runs; i++) {
    samples.finite.push(run(script(COLD_URLS.finite.url)));
    samples.regex.push(run(script(COLD_URLS.regex.url)));
    samples.regexJudged.push(run(script(COLD_URLS.regex.url, true)));
    samples.foreign.push(run(script(COLD_URLS.foreign.url, true, foreignPath)));
    samples.foreignJudged.push(run(script(COLD_URLS.foreignJudged.url, true, foreignPath)));
    samples.floor.push(run(floorScript, floorDir));
    const start = performance.now();
    spawnSync(process.execPath, ['-e', '']);
    nodeAlone.push(performance.now() - start);
  }
  const med = (kind: keyof typeof samples, key: string) =>
    median(samples[kind].map((s) => s[key] as number));
  const figures = (kind: ColdKind): ColdStart => {
    const rewritten = samples[kind][0]?.rewritten;
    const cold = COLD_URLS[kind === 'regexJudged' ? 'regex' : kind];
    if (rewritten !== cold.expected)
      throw new Error(`cold start rewrote ${cold.url} to ${JSON.stringify(rewritten)}`);
    return {
      wallMs: med(kind, 'wallMs'),
      cpuMs: med(kind, 'cpuMs'),
      importMs: med(kind, 'importMs'),
      loadMs: med(kind, 'loadMs'),
      rewriteMs: med(kind, 'rewriteMs'),
      importCpuMs: med(kind, 'importCpuMs'),
      loadCpuMs: med(kind, 'loadCpuMs'),
      rewriteCpuMs: med(kind, 'rewriteCpuMs'),
      rewritten,
    };
  };
  return {
    finite: figures('finite'),
    regex: figures('regex'),
    regexJudged: figures('regexJudged'),
    foreign: figures('foreign'),
    foreignJudged: figures('foreignJudged'),
    floorWallMs: med('floor', 'floorWallMs'),
    floorCpuMs: med('floor', 'floorCpuMs'),
    nodeAloneMs: median(nodeAlone),
  };
}

/**
 * A sample day's change to a channel's rulesets, spread over the corpus: 20 rulesets edited (a
 * target and an exclusion added), 6 added, 4 removed.
 */
function sampleDayChange(rulesets: readonly Ruleset[]): Ruleset[] {
  const step = Math.floor(rulesets.length / 31);
  const out: Ruleset[] = [];
  rulesets.forEach((rs, i) => {
    const k = i / step;
    if (i % step !== 0 || k < 1 || k > 30) return void out.push(rs);
    if (k <= 20) {
      const host = `edited-${k}.example.org`;
      const exclusions = [
        ...rs.exclusions,
        { pattern: `^http://${host.replace(/\./g, '\\.')}/private/` },
      ];
      out.push({ ...rs, targets: [...rs.targets, { host }], exclusions });
    } else if (k <= 26) {
      out.push(rs, {
        ...rs,
        name: `${rs.name} (new ${k})`,
        targets: rs.targets.map((t) => ({ host: `new-${k}.${t.host}` })),
      });
    }
    // k 27..30: removed.
  });
  return out;
}

/** Wire size of the sample day's change as a channel delta (delta.ts), against the whole bundle. */
function dayDelta(rulesets: readonly Ruleset[]): {
  rulesetsChanged: number;
  deltaGzipBytes: number;
  fullGzipBytes: number;
  applyMs: number;
} {
  // Channel releases carry no regex verdicts (clients judge channel patterns themselves).
  const before = compileBundle(rulesets, { timestamp: 1_700_000_000 });
  const changed = sampleDayChange(rulesets);
  const after = compileBundle(changed, { timestamp: 1_700_086_400 });
  const delta = makeDelta(before, after);
  const start = performance.now();
  const rebuilt = applyDelta(before, delta, { timestamp: 1_700_086_400, maxBytes: after.length });
  const applyMs = performance.now() - start;
  if (rebuilt.length !== after.length || !rebuilt.every((b, i) => b === after[i]))
    throw new Error('the delta did not rebuild the release');
  return {
    rulesetsChanged: 30,
    deltaGzipBytes: gzipSync(delta, { level: 9 }).length,
    fullGzipBytes: gzipSync(after, { level: 9 }).length,
    applyMs,
  };
}

/** A pattern that runs as a regex (not a finite language), with its `to` when it is a rule's. */
type DoorPattern = [source: string, to: string | null];

/**
 * The door's cost per pattern, in a process that has judged nothing yet: each distinct corpus
 * pattern that needs a regex, judged once, timed alone (the first ones also pay for warming
 * the analysis code, as a fresh process would). ms.
 */
function doorPerPattern(patterns: DoorPattern[]): {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  over02ms: number;
} {
  const times = patterns.map(([source, to]) => {
    const start = performance.now();
    judgeRegex(source, to === null ? { use: 'test' } : { use: 'replace', to });
    return performance.now() - start;
  });
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return {
    count: sorted.length,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: at(1),
    over02ms: sorted.filter((t) => t > 0.2).length,
  };
}

/** Every distinct pattern of `rulesets` that the matcher runs as a regex (see prepared-pattern.ts). */
function doorPatterns(rulesets: readonly Ruleset[]): DoorPattern[] {
  const out = new Map<string, DoorPattern>();
  for (const rs of rulesets) {
    for (const r of rs.rules)
      if (prepareRule(r.from, r.to).form === Form.Regex)
        out.set(`r${r.from}\u0000${r.to}`, [r.from, r.to]);
    for (const source of [
      ...rs.exclusions.map((e) => e.pattern),
      ...rs.secureCookies.flatMap((c) => [c.host, c.name]),
    ]) {
      if (prepareTest(source).form === Form.Regex) out.set(`t${source}`, [source, null]);
    }
  }
  return [...out.values()];
}

async function main(): Promise<void> {
  if (process.argv[2] === '--measure') {
    process.stdout.write(JSON.stringify(await measure(process.argv[3] as string)));
    return;
  }
  if (process.argv[2] === '--door') {
    process.stdout.write(
      JSON.stringify(
        doorPerPattern(
          JSON.parse(readFileSync(process.argv[3] as string, 'utf8')) as DoorPattern[],
        ),
      ),
    );
    return;
  }
  const files = listRulesetFiles(corpusRulesDir());
  let t = performance.now();
  const rulesets: Ruleset[] = [];
  for (const file of files) {
    const parsed = parseRulesetXml(readFileSync(file, 'utf8'), file);
    if (parsed.ruleset !== null) rulesets.push(parsed.ruleset);
  }
  const parseMs = performance.now() - t;
  t = performance.now();
  const guarded = checkRulesetRegexes(rulesets);
  const guardMs = performance.now() - t;
  t = performance.now();
  // As the extension's build compiles its packaged defaults: with the regex door's verdicts.
  const bundle = compileBundle(guarded.rulesets, { regexVerdicts: true });
  const compileMs = performance.now() - t;
  const dir = mkdtempSync(join(tmpdir(), 'httpsify-bench-'));
  const bundlePath = join(dir, 'corpus.bundle');
  writeFileSync(bundlePath, bundle);
  // As `httpsify compile` writes a library: no verdicts, so every pattern is judged at first use.
  const foreignPath = join(dir, 'foreign.bundle');
  writeFileSync(foreignPath, compileBundle(guarded.rulesets));
  const doorPath = join(dir, 'door-patterns.json');
  writeFileSync(doorPath, JSON.stringify(doorPatterns(guarded.rulesets)));
  const doorChild = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--door', doorPath],
    { encoding: 'utf8' },
  );
  if (doorChild.status !== 0) throw new Error(`door process failed: ${doorChild.stderr}`);
  const door = JSON.parse(doorChild.stdout) as ReturnType<typeof doorPerPattern>;
  const child = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--measure', bundlePath],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    },
  );
  if (child.status !== 0) throw new Error(`measuring process failed: ${child.stderr}`);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the child's own JSON, read field by field below
  const measured = JSON.parse(child.stdout) as Record<string, any>;
  // The package's main entry as Node resolves it (the esbuild build in dist/node-bundle).
  const cold = coldStart(bundlePath, foreignPath);
  const day = dayDelta(guarded.rulesets);
  const oneShot = oneShotFigure();
  rmSync(dir, { recursive: true, force: true });
  const report = {
    node: process.version,
    cpu: execFileSync('sh', ['-c', "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], {
      encoding: 'utf8',
    }).trim(),
    rulesets: guarded.rulesets.length,
    refusedByRegexDoor: rulesets.length - guarded.rulesets.length,
    xmlParseMs: parseMs,
    guardMs,
    doorPerPatternMs: door,
    compileMs,
    bundleBytes: bundle.length,
    bundleGzipBytes: gzipSync(bundle, { level: 9 }).length,
    ...measured,
    coldStart: cold,
    channelDelta: day,
    oneShotCli: oneShot,
  };
  console.log(JSON.stringify(report));
  const r = measured.rewriteUs;
  const u = measured.newUrlUs;
  const row = (name: string, value: string, target = '') =>
    console.log(`${name.padEnd(34)} ${value.padStart(14)}   ${target}`);
  console.log('');
  row('XML parse (24k files)', `${parseMs.toFixed(0)} ms`);
  row('regex door, every pattern up front', `${guardMs.toFixed(0)} ms`);
  row(
    `  per pattern, first verdict (n=${door.count})`,
    `p50 ${door.p50.toFixed(3)} ms`,
    `aim < 0.2 ms; p90 ${door.p90.toFixed(3)}, p99 ${door.p99.toFixed(2)}, max ${door.max.toFixed(1)} ms; ${door.over02ms} over 0.2 ms`,
  );
  row('compile to bundle', `${compileMs.toFixed(0)} ms`);
  row('bundle size', `${(bundle.length / 2 ** 20).toFixed(2)} MB`, 'target <= 3 MB');
  row('bundle size gzip', `${(report.bundleGzipBytes / 2 ** 20).toFixed(2)} MB`);
  row(
    'channel delta, a day (30 rulesets)',
    `${(day.deltaGzipBytes / 1024).toFixed(1)} KB`,
    `${((100 * day.deltaGzipBytes) / day.fullGzipBytes).toFixed(2)}% of the ${(day.fullGzipBytes / 2 ** 20).toFixed(2)} MB gzip bundle (target <= 2%); client rebuild ${day.applyMs.toFixed(0)} ms`,
  );
  row(
    'load, trusted bytes (median of 20)',
    `${measured.loadTrustedMsMedian.toFixed(3)} ms`,
    'target <= 2 ms (packaged or signature-verified bundle)',
  );
  row(
    'load, full verification (median)',
    `${measured.loadMsMedian.toFixed(2)} ms`,
    'checksum + cross-references, for files from disk',
  );
  for (const [kind, label] of [
    ['finite', 'cold start: import+load+rewrite'],
    ['regex', '  same, first rule needs a regex'],
    ['regexJudged', '  same, verdicts not trusted'],
    ['foreign', '  library we did not build, Google'],
    ['foreignJudged', '  same, maps.google.com (1 verdict)'],
  ] as const) {
    const c = cold[kind];
    row(
      label,
      `${c.wallMs.toFixed(1)} ms`,
      `${kind === 'finite' ? 'target <= 25 ms (median of 21 fresh processes; ' : '('}wall import ${c.importMs.toFixed(1)}, read+load ${c.loadMs.toFixed(1)}, rewrite ${c.rewriteMs.toFixed(1)} ms)`,
    );
    row(
      `${kind === 'finite' ? '  ' : '    '}CPU: import+load+rewrite`,
      `${c.cpuMs.toFixed(1)} ms`,
      `target <= 25 ms; import ${c.importCpuMs.toFixed(1)}, read+load ${c.loadCpuMs.toFixed(1)}, first rewrite ${c.rewriteCpuMs.toFixed(1)} ms`,
    );
  }
  row(
    '  floor: Node, no engine',
    `${cold.floorWallMs.toFixed(1)} ms`,
    `CPU ${cold.floorCpuMs.toFixed(1)} ms; importing a one-line package and reading the bundle: part of the figures above`,
  );
  row(
    '  for scale: `node -e ""` alone',
    `${cold.nodeAloneMs.toFixed(0)} ms`,
    'process start to exit, outside the figure above',
  );
  if (oneShot !== null)
    row(
      'CLI one-shot: rewrite URL, CPU',
      `${oneShot.ratio.toFixed(2)}x node`,
      `target <= 2x; ${oneShot.cliCpuMs.toFixed(0)} ms vs \`node -e ''\` ${oneShot.nodeCpuMs.toFixed(0)} ms, whole processes in turn (median of ${oneShot.runs})`,
    );
  row('heap after load', `${measured.heapMb.afterLoad.toFixed(2)} MB`, 'target <= 4 MB');
  row(
    'heap after all oracle URLs',
    `${measured.heapMb.afterAllUrls.toFixed(2)} MB`,
    'target <= 8 MB',
  );
  for (const [name, s] of [
    ['rewrite, public oracle', r.all],
    ['rewrite, hits', r.hits],
    ['rewrite, misses', r.misses],
    ['new URL() yardstick', u],
    ['rewrite, uncovered hosts', measured.uncoveredUs],
    ['new URL(), uncovered hosts', measured.newUrlUncoveredUs],
  ] as const) {
    row(
      `${name} (n=${s.count})`,
      `mean ${s.mean.toFixed(3)} µs`,
      `p50 ${s.p50.toFixed(2)}  p99 ${s.p99.toFixed(2)}  max ${s.max.toFixed(1)} µs`,
    );
  }
  row(
    'floor: read every character',
    `mean ${measured.charReadUs.toFixed(3)} µs`,
    `${(measured.charReadUs / u.mean).toFixed(2)}x new URL(): what any JS matcher spends before its first lookup`,
  );
  row(
    'mean rewrite / mean new URL()',
    `${(r.all.mean / u.mean).toFixed(2)}x`,
    'target <= 0.5x; p99 target <= 5 µs',
  );
  row(
    'same, uncovered hosts',
    `${(measured.uncoveredUs.mean / measured.newUrlUncoveredUs.mean).toFixed(2)}x`,
  );
}

await main();
