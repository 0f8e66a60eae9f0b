import { $ } from '../shared/dom.js';
import { localize, t } from '../shared/i18n.js';
import { ext } from '../../platform/browser-api.js';

/**
 * The main-frame handoff page (Chromium). A DNR rule sent the tab here, before any request left
 * the browser, with the http:// address in the fragment. The background decides with the
 * rulesets themselves where the page goes and the page replaces itself with that address, so
 * the history keeps no entry for it.
 */

function init(): void {
  localize();
  const url = location.hash.slice(1);
  const port = ext.runtime.connect({ name: 'handoff' });
  port.onMessage.addListener((answer: { ok: true; target: string } | { ok: false; error: string }) => {
    port.disconnect();
    if (answer.ok) {
      location.replace(answer.target);
      return;
    }
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
  });
  port.postMessage({ url });
}

init();
