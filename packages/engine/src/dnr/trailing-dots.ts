/**
 * Hosts written with a trailing dot (`http://example.com./`): the reference strips the dots
 * before it applies any rule, so `example.com.` is rewritten exactly as `example.com` is.
 * Chromium matches `requestDomains` ignoring those dots, but the compiled filters spell hosts
 * without them (`|http://example.com/`, a host-group regex ending at `[:/?#]`), so none fires.
 * One regex rule takes the dots off, scheme and all else kept, for the hosts the rulesets
 * target; Chromium evaluates the rules again for the redirected request, so every compiled
 * rule, exclusion and the extension's own dynamic rules then apply to the same URL as the
 * reference's. The cost is one regex, and a dotted URL of a covered host that no rule rewrites
 * still loses its dot (the same host for DNS). Main frames are left to the handoff page.
 */
import type { Planned } from './plan.js';
import { ALL_RESOURCE_TYPES } from './types.js';

/**
 * An authority without credentials whose host ends in dots, and what follows the host. The
 * host's last character is not a dot, so `\.+` takes every trailing dot.
 */
export const TRAILING_DOT_REGEX = '^http://([^/?#:@]*[^./?#:@])\\.+([:/?#]|$)';

/** The rule that drops the trailing dots of `domains` (Chromium's subdomain semantics included). */
export function trailingDotRule(domains: readonly string[], priority: number): Planned {
  return {
    priority,
    action: { type: 'redirect', redirect: { regexSubstitution: 'http://\\1\\2' } },
    condition: {
      regexFilter: TRAILING_DOT_REGEX,
      requestDomains: [...domains],
      resourceTypes: ALL_RESOURCE_TYPES.filter((t) => t !== 'main_frame'),
      isUrlFilterCaseSensitive: false,
    },
  };
}
