import { $ } from '../shared/dom.js';
import { HANDOFF_PORT_NAME, handoffAddress } from '../../dnr/handoff-rules.js';
import { localize, t } from '../shared/i18n.js';
import { ext } from '../../platform/browser-api.js';

/**
 * The main-frame handoff page (Chromium). A DNR rule sent the tab here, before any request left
 * the browser, with the http:// address in the query. The background decides with the
 * rulesets themselves where the page goes and the page replaces itself with that address, so
 * the history keeps no entry for it.
 *
 * The worker mostly answers the navigation here with a redirect, so the page never loads
 * (main-frame-handoff.ts). When it does load, it asks at once: this is a classic script, first
 * in <head> (a module would wait for the whole document and its stylesheets), and the
 * stylesheets and texts load only when the answer is slow or an error.
 */

/** How long the page stays blank before it says what it is opening (a worker starting up). */
const SLOW_MS = 300;

type Answer = { ok: true; target: string } | { ok: false; error: string };

const url = handoffAddress(location.href);
const port = ext.runtime.connect({ name: HANDOFF_PORT_NAME });
const slow = setTimeout(() => void showPage(), SLOW_MS);
port.onMessage.addListener((answer: Answer) => {
  clearTimeout(slow);
  port.disconnect();
  if (answer.ok) location.replace(answer.target);
  else void showProblem();
});
port.postMessage({ url });

let shown: Promise<void> | null = null;

/** The body once parsed (this script runs before it), styled and in the user's language. */
function showPage(): Promise<void> {
  shown ??= (async () => {
    if (document.readyState === 'loading')
      await new Promise((resolve) =>
        document.addEventListener('DOMContentLoaded', resolve, { once: true }),
      );
    const sheets = ['theme.css', 'handoff.css'].map((href) =>
      Object.assign(document.createElement('link'), { rel: 'stylesheet', href }),
    );
    // Shown once styled (unstyled text would flash by first), or unstyled if a sheet fails.
    const settled = sheets.map(
      (link) => new Promise((resolve) => (link.onload = link.onerror = resolve)),
    );
    document.head.append(...sheets);
    await Promise.all(settled);
    localize();
    $('main').hidden = false;
  })();
  return shown;
}

async function showProblem(): Promise<void> {
  await showPage();
  const problem = $('#problem');
  problem.textContent = t('handoffProblem', [url]);
  problem.hidden = false;
  // The page is not opening anything any more: the heading says what went wrong instead.
  const heading = $('#heading');
  heading.textContent = t('handoffProblemTitle');
  heading.classList.remove('muted');
  // Never a dead end: try the same address again, or go back where the user came from.
  $('#problem-actions').hidden = false;
  $('#retry').addEventListener('click', () => location.reload());
  $('#back').addEventListener('click', () => history.back());
  $('#retry').focus();
}
