import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The three published packages as a user gets them: packed, installed from the tarballs alone
// into an empty project outside this repository (nothing of the workspace can be resolved from
// there). Third-party dependencies resolve as a user's would, from npm's cache where it has them
// (`npm ci` filled it), else from the registry; the READMEs' examples then run offline as written.
const root = resolve(import.meta.dirname, '../../..');
const PACKAGES = ['engine', 'cli', 'fetch'] as const;
let work: string;
let project: string;

/** The fenced blocks of a README with the given info string, in order. */
function codeBlocks(file: string, lang: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    (m) => m[1] as string,
  );
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'httpsify-install-'));
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  const packed = JSON.parse(
    execFileSync(
      'npm',
      [
        'pack',
        '--json',
        '--ignore-scripts',
        '--pack-destination',
        tarballs,
        ...PACKAGES.flatMap((p) => ['-w', `packages/${p}`]),
      ],
      {
        cwd: root,
        encoding: 'utf8',
      },
    ),
  ) as { filename: string }[];
  project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'try-httpsify', private: true, type: 'module' })}\n`,
  );
  execFileSync(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      ...packed.map((p) => join(tarballs, p.filename)),
    ],
    {
      cwd: project,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}, 180_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed packages, installed on their own', () => {
  it('installs nothing of the workspace: every @httpsify package comes from its tarball', () => {
    for (const pkg of PACKAGES) {
      const installed = JSON.parse(
        readFileSync(join(project, 'node_modules/@httpsify', pkg, 'package.json'), 'utf8'),
      ) as { version: string };
      const source = JSON.parse(
        readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8'),
      ) as { version: string };
      expect(installed.version).toBe(source.version);
    }
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string; link?: boolean }>;
    };
    expect(Object.entries(lock.packages).filter(([, p]) => p.link === true)).toEqual([]);
  });

  it('leaves the queue stack out; sweep --queue says what to install', () => {
    for (const heavy of ['bullmq', 'ioredis', 'msgpackr', 'msgpackr-extract'])
      expect([heavy, existsSync(join(project, 'node_modules', heavy))]).toEqual([heavy, false]);
    const rules = join(project, 'node_modules/@httpsify/engine/rulesets');
    const run = spawnSync('npx', ['httpsify', 'sweep', '--queue', 'redis://127.0.0.1:9', rules], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, npm_config_offline: 'true' },
    });
    expect(run.stderr).toContain(
      'sweep --queue needs BullMQ and ioredis, which are not installed: npm install bullmq@6.7.6 ioredis@6.0.0',
    );
    expect(run.status).toBe(2);
  });

  it("runs the CLI README's examples with npx, offline", () => {
    const [block] = codeBlocks('packages/cli/README.md', 'sh').filter((b) =>
      b.startsWith('npx httpsify'),
    );
    expect(block).toBeDefined();
    let ran = 0;
    for (const line of (block as string).split('\n')) {
      const [command, comment] = line.split(/\s+# /) as [string, string | undefined];
      if (command.trim() === '' || command.startsWith('npm install')) continue;
      const run = spawnSync('sh', ['-c', command], {
        cwd: project,
        encoding: 'utf8',
        env: { ...process.env, npm_config_offline: 'true' },
      });
      expect([command, run.status, run.stderr.includes('npm error')]).toEqual([command, 0, false]);
      // A comment that is a URL is the output the README promises.
      if (comment !== undefined && /^https?:\/\/\S+$/.test(comment.trim()))
        expect(run.stdout.trim()).toBe(comment.trim());
      ran++;
    }
    expect(ran).toBeGreaterThanOrEqual(5);
  });

  it("runs the fetch README's first example, its requests answered by undici's MockAgent", () => {
    const [example] = codeBlocks('packages/fetch/README.md', 'js');
    expect(example).toContain("from '@httpsify/fetch'");
    // No network in CI: the process-wide undici dispatcher answers for en.wikipedia.org, and
    // refuses any other connection (an http:// request would fail the example).
    writeFileSync(
      join(project, 'offline.mjs'),
      [
        "import { MockAgent, setGlobalDispatcher } from 'undici';",
        'const agent = new MockAgent();',
        'agent.disableNetConnect();',
        "agent.get('https://en.wikipedia.org').intercept({ path: '/wiki/HTTPS', method: 'GET' }).reply(200, 'HTTPS');",
        'setGlobalDispatcher(agent);',
      ].join('\n'),
    );
    writeFileSync(join(project, 'example.mjs'), example as string);
    const run = spawnSync(process.execPath, ['--import', './offline.mjs', 'example.mjs'], {
      cwd: project,
      encoding: 'utf8',
    });
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toBe('https://en.wikipedia.org/wiki/HTTPS 200\n');
  });
});
