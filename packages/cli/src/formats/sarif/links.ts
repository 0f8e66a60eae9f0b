import type { LinksReport } from '../../links/run-links.js';
import { upgradedBy as by } from '../text/links.js';
import { artifactUri, formatSarifLog, type SarifResult, type SarifRule } from './log.js';

const RULE_UPGRADE = 'insecure-link';
const RULE_UNVERIFIED = 'insecure-link-not-verified';

/** The two kinds of link finding, as code-scanning UIs list them. */
const LINK_RULES: SarifRule[] = [
  {
    id: RULE_UPGRADE,
    name: 'InsecureLink',
    shortDescription: { text: 'An http:// link that can use HTTPS' },
    fullDescription: {
      text: 'The link uses plain HTTP, and an HTTPS Everywhere-format ruleset (or, with --upgrade-all, a check of both versions) says the same resource is served over HTTPS.',
    },
    help: {
      text: 'Run `httpsify links fix` to rewrite the link, or change http:// to the https:// URL shown.',
    },
    defaultConfiguration: { level: 'warning' },
  },
  {
    id: RULE_UNVERIFIED,
    name: 'InsecureLinkNotVerified',
    shortDescription: { text: 'An http:// link whose HTTPS version did not answer alike' },
    fullDescription: {
      text: 'A ruleset or --upgrade-all offers an HTTPS URL, but fetching both versions did not give the same status, host and similar content.',
    },
    help: { text: 'Check the HTTPS version by hand before changing the link.' },
    defaultConfiguration: { level: 'note' },
  },
];

/**
 * SARIF 2.1.0 for code-scanning UIs (GitHub, Azure DevOps, VS Code's SARIF viewer): one result
 * per link with its region, the upgrade as a `fix` (the replacement bytes), "not verified"
 * links as notes, and files that could not be read as tool notifications.
 */
export function linksSarif(report: LinksReport, cwd: string, version: string): string {
  const results = report.findings.map((f): SarifResult => {
    const region = {
      startLine: f.line,
      startColumn: f.column,
      endLine: f.endLine,
      endColumn: f.endColumn,
    };
    const artifactLocation = artifactUri(f.file, cwd);
    const unverified = f.verified === false;
    return {
      ruleId: unverified ? RULE_UNVERIFIED : RULE_UPGRADE,
      level: unverified ? 'note' : 'warning',
      message: {
        text: unverified
          ? `${f.url} could move to ${f.rewritten} (${by(f)}), but it was not verified: ${f.reason ?? ''}`
          : `${f.url} can be upgraded to ${f.rewritten} (${by(f)})`,
      },
      locations: [{ physicalLocation: { artifactLocation, region } }],
      properties: { url: f.url, rewritten: f.rewritten, ruleset: f.ruleset, context: f.context },
      ...(unverified
        ? {}
        : {
            fixes: [
              {
                description: { text: `Use ${f.rewritten}` },
                artifactChanges: [
                  {
                    artifactLocation,
                    replacements: [
                      { deletedRegion: region, insertedContent: { text: f.replacement } },
                    ],
                  },
                ],
              },
            ],
          }),
    };
  });
  return formatSarifLog({
    cwd,
    version,
    rules: LINK_RULES,
    results,
    executionSuccessful: !report.problems.some((p) => p.severity === 'error'),
    notifications: report.problems.map((p) => ({
      level: p.severity === 'error' ? 'error' : 'note',
      message: { text: `${p.path}: ${p.message}` },
      locations: [{ physicalLocation: { artifactLocation: artifactUri(p.path, cwd) } }],
    })),
  });
}
