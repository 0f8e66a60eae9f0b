import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BidiCommandError, connectBidi } from './bidi-client.js';
import { BROWSERS, requireBrowser } from './browser-requirements.js';

export const FIREFOX = BROWSERS.firefox;

/** How long goto waits for the navigate command's answer before reading the page itself. */
const GOTO_ANSWER_GRACE_MS = 10_000;
/** How long goto then gives the page to reach the load event. */
const GOTO_LOAD_MS = 20_000;

/** A global set on the document a goto leaves: the new document's window lacks it. */
const OLD_PAGE_MARK = '__httpsifyTestOldPage';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the tab shows a new document (without OLD_PAGE_MARK, not `about:blank`) that has
 * reached its load event; throws past GOTO_LOAD_MS.
 */
async function waitForLoadedPage(
  evaluate: <T>(expression: string) => Promise<T>,
  url: string,
): Promise<void> {
  const deadline = Date.now() + GOTO_LOAD_MS;
  while (Date.now() < deadline) {
    const state = await evaluate<{ href: string; ready: string; old: boolean }>(
      `({ href: location.href, ready: document.readyState, old: globalThis.${OLD_PAGE_MARK} === true })`,
    ).catch(() => null);
    if (state !== null && !state.old && state.ready === 'complete' && state.href !== 'about:blank')
      return;
    await sleep(100);
  }
  throw new Error(
    `navigating to ${url}: neither an answer nor a loaded page within ${GOTO_ANSWER_GRACE_MS + GOTO_LOAD_MS} ms`,
  );
}

export interface FirefoxTab {
  /** Navigates and waits for the load event; resolves with the URL the page ended on. */
  goto(url: string): Promise<string>;
  /** Starts a navigation, tolerating its failure: for loads the extension sends elsewhere (poll `location.href`). */
  start(url: string): Promise<void>;
  /**
   * Evaluates an expression in the page (promises awaited); the value must survive JSON.
   * `userActivation`: as if the user had just clicked (a page may then open a window).
   */
  evaluate<T>(expression: string, options?: { userActivation?: boolean }): Promise<T>;
  /** The whole document as PNG (BiDi `browsingContext.captureScreenshot`). */
  screenshot(): Promise<Buffer>;
  /** Sets the tab's viewport in CSS pixels. */
  setViewport(width: number, height: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Preferences that send plain-HTTP loads of `hosts` through `proxy` ("host:port") while their
 * HTTPS connects directly (a proxy auto-config script can tell the schemes apart; BiDi's
 * per-context proxy cannot): a name's HTTPS can then meet a closed port 443 or fail to resolve
 * while its HTTP answers.
 */
export function plainHttpProxyPrefs(
  hosts: string[],
  proxy: string,
): Record<string, string | number> {
  const pac = `function FindProxyForURL(url, host) {
  return url.slice(0, 5) === 'http:' && ${JSON.stringify(hosts)}.indexOf(host) >= 0 ? 'PROXY ${proxy}' : 'DIRECT';
}`;
  return {
    'network.proxy.type': 2,
    'network.proxy.autoconfig_url': `data:application/x-ns-proxy-autoconfig,${encodeURIComponent(pac)}`,
  };
}

export interface FirefoxBrowser {
  /** The browser's own process: its content processes (the extension's among them) are below it. */
  pid: number;
  /** Opens a tab, in the default user context or in one `createUserContext` made. */
  newTab(options?: { userContext?: string }): Promise<FirefoxTab>;
  /**
   * A user context (container) of its own; `acceptInsecureCerts: false` checks certificates
   * there as a user's browser does.
   */
  createUserContext(options: { acceptInsecureCerts: boolean }): Promise<string>;
  /** What `prefers-color-scheme` answers in every page (a preference set through the browser's own scope). */
  setColorScheme(scheme: 'light' | 'dark'): Promise<void>;
  /**
   * Sets boolean preferences in the running browser. The remote agent resets some preferences
   * at start (HTTPS-First among them), so a test that wants Firefox's own upgrading on sets it
   * here rather than in user.js.
   */
  setPrefs(prefs: Record<string, boolean>): Promise<void>;
  /** Reads a boolean preference of the running browser. */
  getPref(name: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface FirefoxWithExtension extends FirefoxBrowser {
  extensionId: string;
  /** `moz-extension://<uuid>`: the extension's pages, e.g. to message its background. */
  extensionOrigin: string;
}

/**
 * Preferences for a throwaway profile. Firefox's own HTTPS upgrading is off, so every upgrade
 * seen comes from the extension; the test hosts resolve to loopback; nothing reaches out to
 * the network on its own (this machine reaches nothing beyond loopback anyway).
 */
function testProfilePrefs(
  loopbackHosts: string[],
  extensionUuids: Record<string, string> = {},
): Record<string, string | number | boolean> {
  return {
    // The internal UUID of an add-on is random per install unless given here.
    'extensions.webextensions.uuids': JSON.stringify(extensionUuids),
    'dom.security.https_first': false,
    'dom.security.https_first_pbm': false,
    'dom.security.https_first_schemeless': false,
    'dom.security.https_only_mode': false,
    'network.dns.localDomains': loopbackHosts.join(','),
    'network.proxy.type': 0,
    'network.captive-portal-service.enabled': false,
    'network.connectivity-service.enabled': false,
    'browser.shell.checkDefaultBrowser': false,
    'browser.startup.homepage_override.mstone': 'ignore',
    'browser.aboutwelcome.enabled': false,
    'datareporting.policy.dataSubmissionEnabled': false,
    'toolkit.telemetry.reportingpolicy.firstRun': false,
    'app.update.disabledForTesting': true,
    'extensions.update.enabled': false,
  };
}

function userJs(prefs: Record<string, string | number | boolean>): string {
  return Object.entries(prefs)
    .map(([name, value]) => `user_pref(${JSON.stringify(name)}, ${JSON.stringify(value)});\n`)
    .join('');
}

/** Firefox prints the BiDi endpoint on stderr once it listens (port 0 picks a free port). */
function waitForBidiEndpoint(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () =>
        reject(new Error(`Firefox printed no BiDi endpoint within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const found = /WebDriver BiDi listening on (ws:\/\/\S+)/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Firefox exited (${code}) before listening:\n${output}`));
    });
  });
}

/** Ends the whole process group (content processes included) and waits for the parent. */
async function killFirefox(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // Already gone.
  }
  await exited;
}

/**
 * Debian's Firefox ESR, headless, driven over its built-in WebDriver BiDi (no geckodriver),
 * with one unpacked extension installed as a temporary add-on (no signing needed). The
 * session accepts the test server's self-signed certificate.
 */
export async function launchFirefoxWithExtension(
  extensionDir: string,
  loopbackHosts: string[],
  options: { prefs?: Record<string, string | number | boolean> } = {},
): Promise<FirefoxWithExtension> {
  const { browser, extension } = await launchFirefoxProfile(extensionDir, loopbackHosts, options);
  return { ...browser, ...extension! };
}

/** The same browser and preferences with no extension: what a bench holds the extension against. */
export async function launchFirefoxAlone(
  loopbackHosts: string[],
  options: { prefs?: Record<string, string | number | boolean> } = {},
): Promise<FirefoxBrowser> {
  return (await launchFirefoxProfile(null, loopbackHosts, options)).browser;
}

async function launchFirefoxProfile(
  extensionDir: string | null,
  loopbackHosts: string[],
  options: { prefs?: Record<string, string | number | boolean> },
): Promise<{
  browser: FirefoxBrowser;
  extension: { extensionId: string; extensionOrigin: string } | null;
}> {
  requireBrowser('firefox');
  const geckoId =
    extensionDir === null
      ? null
      : (
          JSON.parse(readFileSync(join(extensionDir, 'manifest.json'), 'utf8')) as {
            browser_specific_settings: { gecko: { id: string } };
          }
        ).browser_specific_settings.gecko.id;
  const uuid = randomUUID();
  const profile = mkdtempSync(join(tmpdir(), 'httpsify-firefox-profile-'));
  writeFileSync(
    join(profile, 'user.js'),
    userJs({
      ...testProfilePrefs(loopbackHosts, geckoId === null ? {} : { [geckoId]: uuid }),
      ...options.prefs,
    }),
  );
  // Since Firefox 153, BiDi navigates to moz-extension:// pages only with system access allowed.
  const child = spawn(
    FIREFOX,
    [
      '--headless',
      '--no-remote',
      '--remote-debugging-port=0',
      '--remote-allow-system-access',
      '--profile',
      profile,
    ],
    {
      // Own process group, so close() can end Firefox and its content processes together.
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, MOZ_CRASHREPORTER_DISABLE: '1' },
    },
  );
  const cleanUp = async () => {
    await killFirefox(child);
    rmSync(profile, { recursive: true, force: true });
  };
  try {
    const endpoint = await waitForBidiEndpoint(child, 30_000);
    const bidi = await connectBidi(`${endpoint}/session`);
    await bidi.send('session.new', {
      capabilities: { alwaysMatch: { acceptInsecureCerts: true } },
    });
    const extensionId =
      extensionDir === null
        ? null
        : (
            await bidi.send<{ extension: string }>('webExtension.install', {
              extensionData: { type: 'path', path: extensionDir },
            })
          ).extension;
    /** Evaluates in the browser window's own scope (allowed by --remote-allow-system-access). */
    const chromeScope = async (expression: string): Promise<string> => {
      const { contexts } = await bidi.send<{ contexts: { context: string }[] }>(
        'browsingContext.getTree',
        { 'moz:scope': 'chrome' },
      );
      const chrome = contexts[0]?.context;
      if (chrome === undefined) throw new Error('no browser window to evaluate in');
      const answer = await bidi.send<{
        type: string;
        result?: { value?: unknown };
        exceptionDetails?: { text: string };
      }>('script.evaluate', {
        expression: `String(${expression})`,
        target: { context: chrome },
        awaitPromise: false,
      });
      if (answer.type !== 'success')
        throw new Error(`${expression}: ${answer.exceptionDetails?.text}`);
      return String(answer.result?.value ?? '');
    };
    const browser: FirefoxBrowser = {
      pid: child.pid!,
      newTab: async (options = {}) => {
        const { context } = await bidi.send<{ context: string }>('browsingContext.create', {
          type: 'tab',
          ...options,
        });
        const evaluate = async <T>(
          expression: string,
          options: { userActivation?: boolean } = {},
        ): Promise<T> => {
          // JSON text keeps the client free of BiDi's remote-value decoding.
          const answer = await bidi.send<{
            type: string;
            result?: { value?: string };
            exceptionDetails?: { text: string };
          }>('script.evaluate', {
            expression: `(async () => JSON.stringify(await (${expression})))()`,
            target: { context },
            awaitPromise: true,
            ...(options.userActivation === true ? { userActivation: true } : {}),
          });
          if (answer.type !== 'success')
            throw new Error(`evaluate ${expression}: ${answer.exceptionDetails?.text}`);
          return (
            answer.result?.value === undefined ? undefined : JSON.parse(answer.result.value)
          ) as T;
        };
        return {
          goto: async (url) => {
            // Marks the document shown now, so a later read can tell it from the new one.
            await evaluate(`void (globalThis.${OLD_PAGE_MARK} = true)`).catch(() => undefined);
            const navigated = bidi.send('browsingContext.navigate', {
              context,
              url,
              wait: 'complete',
            });
            // Under load, Firefox at times never answers a navigate whose page did load. Past a
            // grace period the page's own state decides; the navigation is never sent twice.
            const answered = await Promise.race([
              navigated.then(() => true),
              sleep(GOTO_ANSWER_GRACE_MS).then(() => false),
            ]);
            if (!answered) {
              navigated.catch(() => undefined);
              await waitForLoadedPage(evaluate, url);
            }
            return evaluate<string>('location.href');
          },
          start: async (url) => {
            try {
              await bidi.send('browsingContext.navigate', { context, url, wait: 'none' });
            } catch (error) {
              // Firefox reports a load that fails or is replaced (what the caller waits for) as an error.
              if (!(error instanceof BidiCommandError)) throw error;
            }
          },
          evaluate,
          screenshot: async () => {
            const { data } = await bidi.send<{ data: string }>(
              'browsingContext.captureScreenshot',
              { context, origin: 'document' },
            );
            return Buffer.from(data, 'base64');
          },
          setViewport: async (width, height) =>
            void (await bidi.send('browsingContext.setViewport', {
              context,
              viewport: { width, height },
            })),
          close: async () => void (await bidi.send('browsingContext.close', { context })),
        };
      },
      createUserContext: async ({ acceptInsecureCerts }) => {
        const { userContext } = await bidi.send<{ userContext: string }>(
          'browser.createUserContext',
          { acceptInsecureCerts },
        );
        return userContext;
      },
      setPrefs: async (prefs) => {
        for (const [name, value] of Object.entries(prefs))
          await chromeScope(`Services.prefs.setBoolPref(${JSON.stringify(name)}, ${value})`);
      },
      getPref: async (name) =>
        JSON.parse(
          await chromeScope(
            `JSON.stringify(Services.prefs.getBoolPref(${JSON.stringify(name)}, false))`,
          ),
        ) as boolean,
      setColorScheme: async (scheme) => {
        // No BiDi command emulates the colour scheme in Firefox 153; its content-override
        // preference does, set in the browser window's scope (allowed by --remote-allow-system-access).
        const { contexts } = await bidi.send<{ contexts: { context: string }[] }>(
          'browsingContext.getTree',
          { 'moz:scope': 'chrome' },
        );
        const chrome = contexts[0]?.context;
        if (chrome === undefined) throw new Error('no browser window to set the colour scheme in');
        const answer = await bidi.send<{ type: string; exceptionDetails?: { text: string } }>(
          'script.evaluate',
          {
            expression: `Services.prefs.setIntPref('layout.css.prefers-color-scheme.content-override', ${scheme === 'dark' ? 0 : 1})`,
            target: { context: chrome },
            awaitPromise: false,
          },
        );
        if (answer.type !== 'success')
          throw new Error(`setting the colour scheme failed: ${answer.exceptionDetails?.text}`);
      },
      close: async () => {
        bidi.close();
        await cleanUp();
      },
    };
    return {
      browser,
      extension:
        extensionId === null ? null : { extensionId, extensionOrigin: `moz-extension://${uuid}` },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
