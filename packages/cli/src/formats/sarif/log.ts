import { isAbsolute, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The SARIF 2.1.0 log every httpsify report shares (`links`, `check`, `test`): one run of the
 * tool `httpsify`, its rules, artifact URIs relative to %SRCROOT% (the working directory, the
 * repository root in CI), and UTF-16 columns. Commands give their rules, results and tool
 * notifications; the envelope is written here once.
 */

export type SarifLevel = 'error' | 'warning' | 'note';

/** A physical location: the file, and a region when the finding has one. */
export interface SarifLocation {
  physicalLocation: {
    artifactLocation: { uri: string; uriBaseId?: string };
    region?: { startLine: number; startColumn?: number; endLine?: number; endColumn?: number };
  };
}

export interface SarifRule {
  id: string;
  name?: string;
  shortDescription?: { text: string };
  fullDescription?: { text: string };
  help?: { text: string };
  helpUri?: string;
  defaultConfiguration?: { level: SarifLevel };
}

/** A result; `ruleIndex` is filled in from the rules given with it. */
export interface SarifResult {
  ruleId: string;
  level: SarifLevel;
  message: { text: string };
  locations: SarifLocation[];
  [more: string]: unknown;
}

export interface SarifNotification {
  level: SarifLevel;
  message: { text: string };
  locations?: SarifLocation[];
}

export interface SarifRun {
  /** The working directory the artifact URIs are relative to. */
  cwd: string;
  version: string;
  rules: readonly SarifRule[];
  results: readonly SarifResult[];
  notifications?: readonly SarifNotification[];
  executionSuccessful: boolean;
}

/** SARIF's artifact URI: relative to the working directory (the repository root in CI) if inside. */
export function artifactUri(file: string, cwd: string): { uri: string; uriBaseId?: string } {
  const rel = relative(cwd, file);
  if (!isAbsolute(rel) && !rel.startsWith('..'))
    return { uri: rel.split(sep).map(encodeURIComponent).join('/'), uriBaseId: '%SRCROOT%' };
  return { uri: pathToFileURL(file).href };
}

/** httpsify's severities as SARIF levels: "info" findings are for review, SARIF's "note". */
export function sarifLevel(severity: 'error' | 'warning' | 'info'): SarifLevel {
  return severity === 'info' ? 'note' : severity;
}

/** The whole log as the text a command prints or writes (`-o`). */
export function formatSarifLog(run: SarifRun): string {
  const index = new Map(run.rules.map((r, i) => [r.id, i]));
  const log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'httpsify',
            semanticVersion: run.version,
            informationUri: 'https://www.npmjs.com/package/@httpsify/cli',
            rules: run.rules,
          },
        },
        originalUriBaseIds: {
          '%SRCROOT%': { uri: `${pathToFileURL(run.cwd).href.replace(/\/?$/, '/')}` },
        },
        columnKind: 'utf16CodeUnits',
        invocations: [
          {
            executionSuccessful: run.executionSuccessful,
            toolExecutionNotifications: run.notifications ?? [],
          },
        ],
        // ruleIndex right after ruleId, as code-scanning UIs list them.
        results: run.results.map(({ ruleId, ...rest }) => ({
          ruleId,
          ruleIndex: index.get(ruleId),
          ...rest,
        })),
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
