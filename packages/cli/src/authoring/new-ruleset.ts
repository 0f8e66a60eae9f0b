/** The file name and text of a new trivial ruleset for `domain` (and `www.domain`). */
export interface NewRuleset {
  fileName: string;
  name: string;
  targets: string[];
  xml: string;
}

const HOST = /^(?:[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/;

/** Validates the domain given on the command line; the message says what to type instead. */
export function checkNewDomain(domain: string): string | null {
  if (domain !== domain.toLowerCase())
    return `write the domain in lower case: ${domain.toLowerCase()}`;
  if (/^https?:|\//.test(domain))
    return `give a host name, not a URL (e.g. ${domain.replace(/^https?:\/\//, '').split('/')[0] ?? domain})`;
  if (domain.startsWith('www.'))
    return `omit the leading "www." and pass --www to add it as a target`;
  if (!HOST.test(domain))
    return `"${domain}" is not a host name like example.com (use punycode xn--… for non-ASCII names)`;
  return null;
}

/** Capitalised site name, as ruleset file names conventionally are: example.com -> Example.com. */
function siteName(domain: string): string {
  return domain.charAt(0).toUpperCase() + domain.slice(1);
}

export function newRuleset(domain: string, options: { www?: boolean } = {}): NewRuleset {
  const name = siteName(domain);
  const targets = options.www === true ? [domain, `www.${domain}`] : [domain];
  const lines = [
    '<!--',
    `\tRuleset for ${domain}, made by \`httpsify new\`.`,
    '',
    '\tEvery target implies a test of http://TARGET/. Add <test url="..."/> for pages worth',
    '\tchecking, then run: httpsify check, httpsify test, httpsify fetch-test.',
    '-->',
    `<ruleset name="${name}">`,
    ...targets.map((t) => `\t<target host="${t}" />`),
    '',
    ...targets.map((t) => `\t<test url="http://${t}/robots.txt" />`),
    '',
    '\t<rule from="^http:" to="https:" />',
    '</ruleset>',
    '',
  ];
  return { fileName: `${name}.xml`, name, targets, xml: lines.join('\n') };
}
