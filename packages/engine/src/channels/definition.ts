import { compileRulesetRegex } from '../regex/safe-regex.js';
import { ChannelError } from './errors.js';
import { checkPublicJwk } from './signature.js';

/**
 * A ruleset update channel: where to fetch, which key must have signed, and which URLs its
 * rulesets may touch.
 */
export interface ChannelDefinition {
  /** Unique, human-readable name; also keys the installed state. */
  name: string;
  /** `https:` URL the channel files live under (`<prefix>/latest-timestamp`, …). */
  urlPrefix: string;
  /** RSA-PSS public key (JWK) that must have signed every bundle. */
  publicKey: JsonWebKey;
  /** JavaScript regular expression source; the channel's rulesets only apply to URLs it matches. `''` matches all. */
  scope: string;
  /** When true and a bundle is installed, the built-in default rulesets are not used. */
  replacesDefaults: boolean;
}

const KNOWN_FIELDS = new Set(['name', 'urlPrefix', 'publicKey', 'scope', 'replacesDefaults']);
const MAX_NAME_LENGTH = 100;

/**
 * Validates a channel definition as read from JSON. Every problem is reported with the field
 * it concerns; unknown fields are refused so a typo (`replaceDefaults`) cannot silently change
 * behaviour.
 */
export function parseChannelDefinition(value: unknown, source = 'channel definition'): ChannelDefinition {
  const fail = (message: string): never => {
    throw new ChannelError('invalid-definition', `${source}: ${message}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('must be a JSON object');
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!KNOWN_FIELDS.has(key)) fail(`unknown field "${key}" (expected ${[...KNOWN_FIELDS].join(', ')})`);
  }

  const name = obj.name;
  if (typeof name !== 'string' || name.trim() === '') return fail('"name" must be a non-empty string');
  if (name.length > MAX_NAME_LENGTH) fail(`"name" is longer than ${MAX_NAME_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) fail('"name" contains control characters');

  const urlPrefix = obj.urlPrefix;
  if (typeof urlPrefix !== 'string') return fail('"urlPrefix" must be a string');
  let url: URL;
  try {
    url = new URL(urlPrefix);
  } catch {
    return fail(`"urlPrefix" is not a valid URL: ${JSON.stringify(urlPrefix)}`);
  }
  // The signature protects integrity; HTTPS also keeps which channels a user follows private.
  if (url.protocol !== 'https:') fail(`"urlPrefix" must be an https: URL, got ${JSON.stringify(urlPrefix)}`);
  if (url.search !== '' || url.hash !== '') fail('"urlPrefix" must not contain a query or fragment');

  const scope = obj.scope ?? '';
  if (typeof scope !== 'string') return fail('"scope" must be a string (a regular expression; "" matches every URL)');
  const judged = scope === '' ? null : compileRulesetRegex(scope);
  if (judged !== null && !judged.ok) {
    fail(judged.refused ? `"scope" is refused: ${judged.reason}` : `"scope" is not a valid regular expression: ${judged.reason}`);
  }

  const replacesDefaults = obj.replacesDefaults ?? false;
  if (typeof replacesDefaults !== 'boolean') return fail('"replacesDefaults" must be true or false');

  if (obj.publicKey === undefined) return fail('"publicKey" is missing (the JWK from `httpsify keygen`, file *.public.jwk)');
  let publicKey: JsonWebKey;
  try {
    publicKey = checkPublicJwk(obj.publicKey);
  } catch (err) {
    return fail(`"publicKey": ${err instanceof Error ? err.message : String(err)}`);
  }

  return { name, urlPrefix, publicKey, scope, replacesDefaults };
}
