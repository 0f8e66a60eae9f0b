import type { Diagnostic, Severity, SourceLocation } from '../model/ruleset.js';

/** A diagnostic at an element's location; elements without one (built in code) fall back to 1:1. */
export function diagnosticAt(
  loc: SourceLocation | undefined,
  severity: Severity,
  code: string,
  message: string,
  file = '',
): Diagnostic {
  return {
    severity,
    code,
    message,
    file: loc?.file ?? file,
    line: loc?.line ?? 1,
    column: loc?.column ?? 1,
  };
}
