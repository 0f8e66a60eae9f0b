import { defaultSimpleRule, typedHost, type SimpleRule } from '../../settings/user-rules.js';

/** A host name or an IP literal; Chromium's URL parser keeps a space in a host as `%20`, so the characters are checked too. */
const SITE_NAME = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)$/i;

/** Whether what people typed (a name, or a pasted address) names a site at all. */
export function isSiteName(typed: string): boolean {
  const host = typedHost(typed);
  return host !== null && SITE_NAME.test(host);
}

/**
 * The rule the popup's and the options page's plain rule forms describe: which site (a name or
 * a pasted address; `port` when it is the open page's own host on another port) and where it
 * goes (empty: the same site over HTTPS; else another site's name or address). What is not a
 * site name at all is passed on as typed, for the background's checks to refuse.
 */
export function formRule(site: string, to: string, port = ''): SimpleRule & { toProblem: boolean } {
  const host = typedHost(site) ?? site.trim().toLowerCase();
  const rule = defaultSimpleRule(host, port);
  if (to.trim() === '') return { ...rule, toProblem: false };
  const target = typedHost(to);
  if (target === null || !SITE_NAME.test(target)) return { ...rule, toProblem: true };
  return { ...defaultSimpleRule(host), to: `https://${target}/`, toProblem: false };
}
