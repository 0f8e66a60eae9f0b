/** Both browsers' manifests, generated in one place so they cannot drift apart. */
export type Browser = 'chromium' | 'firefox';

import {
  BACKGROUND_SCRIPT,
  STATIC_RULES_PATH,
  STATIC_RULESET_ID,
} from '../platform/packaged-files.js';

export interface ManifestOptions {
  version: string;
  /** Chromium: `declarativeNetRequestFeedback`, which unpacked test builds use to query matches. */
  feedback?: boolean;
}

/**
 * `alarms` wakes the background for the daily channel checks; `unlimitedStorage` because
 * installed channel bundles take megabytes and storage.local allows 10 MB without it.
 */
const CHANNEL_PERMISSIONS = ['storage', 'unlimitedStorage', 'alarms'];

/**
 * Firefox's default policy for Manifest V3 extension pages is `script-src 'self';
 * upgrade-insecure-requests;` (pref `extensions.webextensions.default-content-security-policy.v3`
 * in ESR 153): every http:// fetch of the background would leave as https://, so the
 * fallback's "does the site answer over HTTP?" probe and the captive-portal probe would ask the
 * wrong question. Measured in ESR 153: the server saw `HEAD https /` for `fetch('http://…')`.
 * The same scripts policy, without the upgrade; the extension's pages load nothing over HTTP.
 */
const FIREFOX_EXTENSION_PAGES_CSP = "script-src 'self';";

const NAME = 'httpsify';
const DESCRIPTION = 'Keeps web traffic on HTTPS with HTTPS Everywhere-format rulesets.';

export function manifestFor(browser: Browser, options: ManifestOptions): Record<string, unknown> {
  const common = {
    manifest_version: 3,
    name: NAME,
    description: DESCRIPTION,
    version: options.version,
    host_permissions: ['<all_urls>'],
  };
  if (browser === 'chromium') {
    return {
      ...common,
      minimum_chrome_version: '120',
      background: { service_worker: BACKGROUND_SCRIPT, type: 'module' },
      permissions: [
        'declarativeNetRequest',
        ...(options.feedback ? ['declarativeNetRequestFeedback'] : []),
        'webRequest',
        'webNavigation',
        'cookies',
        ...CHANNEL_PERMISSIONS,
      ],
      declarative_net_request: {
        rule_resources: [{ id: STATIC_RULESET_ID, enabled: true, path: STATIC_RULES_PATH }],
      },
    };
  }
  return {
    ...common,
    background: { scripts: [BACKGROUND_SCRIPT] },
    content_security_policy: { extension_pages: FIREFOX_EXTENSION_PAGES_CSP },
    permissions: [
      'webRequest',
      'webRequestBlocking',
      'webNavigation',
      'cookies',
      ...CHANNEL_PERMISSIONS,
    ],
    // AMO requires new extensions to declare what they collect: nothing leaves the browser, so
    // `none`. Firefox reads the key from 140 (ESR 140), Firefox for Android from 142.
    browser_specific_settings: {
      gecko: {
        id: 'httpsify@httpsify.org',
        strict_min_version: '140.0',
        data_collection_permissions: { required: ['none'] },
      },
      gecko_android: { strict_min_version: '142.0' },
    },
  };
}
