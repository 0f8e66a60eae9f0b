import { Option, type Command } from '../shared/commander.js';
import { collect } from '../shared/rules-option.js';
import {
  addRewriteEngineOptions,
  loadRewriteEngine,
  reportRegexRefusals,
  type RewriteEngineOptions,
} from '../shared/rewrite-engine.js';
import { OUTBOUND_LIMITS } from '../net/outbound-policy.js';
import { requestSettings } from '../fetch-test/request-settings.js';
import { ProgressBar } from '../shared/progress.js';
import { DEFAULT_MAX_BYTES } from '../links/document.js';
import { DEFAULT_PARSE_TIMEOUT_MS } from '../links/markdown-parser.js';
import { linksJson } from '../formats/json/links.js';
import { linksMarkdown } from '../formats/markdown.js';
import { linksSarif } from '../formats/sarif/links.js';
import { linksText } from '../formats/text/links.js';
import { emitReport, raiseExitCode, type Formatters, type Outcome } from '../shared/emit-report.js';
import { DEFAULT_IGNORE_FILE } from '../links/exclude-patterns.js';
import { applicable, runLinks, UsageError, type LinksReport } from '../links/run-links.js';

export { runLinks, type LinksOptions, type LinksReport } from '../links/run-links.js';

type LinksFormat = 'text' | 'json' | 'sarif' | 'markdown';

interface LinksCliOptions extends RewriteEngineOptions {
  format: LinksFormat;
  diff?: boolean;
  verify?: boolean;
  upgradeAll?: boolean;
  concurrency: string;
  timeout: string;
  resolve?: string[];
  ca?: string[];
  allowPrivate?: boolean;
  maxSize: string;
  parseTimeout: string;
  exclude?: string[];
  ignoreFile?: string;
  /** Commander's negation: false with --no-error-on-unmatched-pattern. */
  errorOnUnmatchedPattern?: boolean;
}

const VERSION = '0.1.0';
/** Bodies compared by --verify are cut here: similarity only needs the start of a page. */
const VERIFY_MAX_BODY_BYTES = OUTBOUND_LIMITS.maxBodyBytes;

function positiveInteger(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1)
    throw new UsageError(`${name} must be a positive integer, not "${value}"`);
  return n;
}

function addLinksOptions(command: Command): Command {
  return addRewriteEngineOptions(command)
    .addOption(
      new Option('--format <format>', 'report format (markdown: a table for a CI job summary)')
        .choices(['text', 'json', 'sarif', 'markdown'])
        .default('text'),
    )
    .option(
      '--verify',
      'fetch the http and the https URL first; keep only upgrades that answer alike (same status, same final host, similar content)',
    )
    .option('--upgrade-all', 'also offer https for hosts no ruleset covers (needs --verify)')
    .option('--concurrency <n>', 'with --verify: URL pairs fetched at once', '8')
    .option('--timeout <ms>', 'with --verify: time limit per request, in milliseconds', '10000')
    .option(
      '--resolve <host:ip>',
      'with --verify: connect to IP for HOST (repeatable, like curl)',
      collect,
    )
    .option(
      '--allow-private',
      'with --verify: also fetch loopback, private and link-local addresses (refused by default, also after DNS resolution)',
    )
    .option(
      '--ca <file>',
      'with --verify: also trust the CA certificates in this PEM file (repeatable)',
      collect,
    )
    .option('--max-size <bytes>', 'skip files larger than this', String(DEFAULT_MAX_BYTES))
    .option(
      '--parse-timeout <ms>',
      'skip a Markdown file that takes longer than this to parse',
      String(DEFAULT_PARSE_TIMEOUT_MS),
    )
    .option(
      '--exclude <regex>',
      'leave alone the URLs this JavaScript regex matches, anywhere in the URL (repeatable)',
      collect,
    )
    .option(
      '--ignore-file <path>',
      `read --exclude regexes from this file, one a line, # for comments (default: ${DEFAULT_IGNORE_FILE} if present)`,
    )
    .option(
      '--no-error-on-unmatched-pattern',
      'pass when the paths hold no Markdown, HTML or text file (exit 2 otherwise, as ESLint does)',
    )
    .addHelpText('after', LEAVING_ALONE);
}

/** How to keep a deliberate http:// link, where a CI user looks first (docs/links.md has the rest). */
const LEAVING_ALONE = `
Leaving links alone (not reported, not fixed, counted as "excluded"):
  --exclude REGEX, and each line of ${DEFAULT_IGNORE_FILE} in the current directory
  (or of --ignore-file PATH): the URLs the regex matches anywhere
  <!-- httpsify-ignore-next-line -->   the links on the next line
  <!-- httpsify-ignore-line -->        the links on the same line
  <!-- httpsify-ignore-start --> ... <!-- httpsify-ignore-end -->
                                       the links in between
  In Markdown and HTML a marker counts only inside an HTML comment; in other
  files anywhere, so any comment syntax works: # httpsify-ignore-next-line`;

export function registerLinks(program: Command): void {
  const links = program
    .command('links')
    .description(
      'find http:// links in Markdown, HTML and text files and upgrade them with the rulesets',
    );
  addLinksOptions(
    links
      .command('check')
      .description(
        'report the links that can be upgraded (exit 1 if any, 2 if a file could not be read)',
      )
      .argument('<paths...>', 'files, or directories walked recursively (honouring .gitignore)'),
  ).action(async (paths: string[], options: LinksCliOptions) => {
    await runCommand('check', paths, options);
  });
  addLinksOptions(
    links
      .command('fix')
      .description('rewrite the links in place, changing only the bytes of the URLs')
      .argument('<paths...>', 'files, or directories walked recursively (honouring .gitignore)')
      .option('--diff', 'print a unified diff instead of writing the files'),
  ).action(async (paths: string[], options: LinksCliOptions) => {
    await runCommand('fix', paths, options);
  });
}

async function runCommand(
  mode: 'check' | 'fix',
  paths: string[],
  options: LinksCliOptions,
): Promise<void> {
  try {
    if (options.upgradeAll === true && options.verify !== true)
      throw new UsageError(
        '--upgrade-all needs --verify: hosts that no ruleset covers are only upgraded when both versions answer alike',
      );
    const concurrency = positiveInteger('--concurrency', options.concurrency);
    const timeoutMs = positiveInteger('--timeout', options.timeout);
    const maxBytes = positiveInteger('--max-size', options.maxSize);
    const parseTimeoutMs = positiveInteger('--parse-timeout', options.parseTimeout);
    const settings =
      options.verify === true
        ? requestSettings({
            resolve: options.resolve ?? [],
            caFiles: options.ca ?? [],
            timeoutMs,
            maxBodyBytes: VERIFY_MAX_BODY_BYTES,
            allowPrivate: options.allowPrivate === true,
          })
        : null;
    const engine = await loadRewriteEngine(options);
    const progress: { bar: ProgressBar | null } = { bar: null };
    const report = await runLinks({
      paths,
      mode,
      diff: options.diff === true,
      rewrite: (url) => engine.rewriteWithRuleset(url),
      upgradeAll: options.upgradeAll === true,
      maxBytes,
      parseTimeoutMs,
      exclude: options.exclude ?? [],
      ignoreFile: options.ignoreFile,
      allowEmpty: options.errorOnUnmatchedPattern === false,
      verify:
        settings === null
          ? null
          : {
              settings,
              concurrency,
              onStart: (total) => {
                progress.bar = new ProgressBar(process.stderr, total, 'URL pairs verified');
                progress.bar.render();
              },
              onProgress: () => progress.bar?.tick(),
            },
    });
    progress.bar?.clear();
    // After the progress bar: a refused pattern's ruleset rewrote nothing; say so once.
    reportRegexRefusals(engine);
    const outcome = linksOutcome(mode, report, options.diff === true);
    for (const p of report.problems) process.stderr.write(`httpsify: ${p.path}: ${p.message}\n`);
    for (const n of report.notes) process.stderr.write(`httpsify: ${n}\n`);
    // With --diff, the diff alone goes to stdout (for `patch` or `git apply`); the report to stderr.
    if (outcome.report.diffOnly) {
      process.stdout.write(report.diff);
      await emitReport(LINKS_FORMATS, options.format, outcome.report, { stream: process.stderr });
    } else await emitReport(LINKS_FORMATS, options.format, outcome.report);
    raiseExitCode(outcome.exitCode);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`httpsify links: ${err.message}\n`);
    process.exitCode = 2;
  }
}

/** A links run as its reports see it. */
interface LinksOutput {
  report: LinksReport;
  mode: 'check' | 'fix';
  /** `fix --diff`: nothing was written, so text and Markdown speak as check does. */
  diffOnly: boolean;
  cwd: string;
}

const LINKS_FORMATS: Formatters<LinksOutput, LinksFormat> = {
  text: (o) => linksText(o.report, o.diffOnly ? 'check' : o.mode),
  json: (o) => linksJson(o.report, o.mode),
  sarif: (o) => linksSarif(o.report, o.cwd, VERSION),
  markdown: (o) => linksMarkdown(o.report, o.diffOnly ? 'check' : o.mode),
};

/**
 * The exit status: 2 when a file could not be checked; else 1 while links are left to upgrade
 * (check) or changes are pending (`fix --diff`, as `git diff --exit-code`).
 */
function linksOutcome(
  mode: 'check' | 'fix',
  report: LinksReport,
  diff: boolean,
): Outcome<LinksOutput> {
  const output = { report, mode, diffOnly: mode === 'fix' && diff, cwd: process.cwd() };
  if (report.problems.some((p) => p.severity === 'error')) return { report: output, exitCode: 2 };
  if (mode === 'check' && applicable(report).length > 0) return { report: output, exitCode: 1 };
  if (output.diffOnly && report.changedFiles.length > 0) return { report: output, exitCode: 1 };
  return { report: output, exitCode: 0 };
}
