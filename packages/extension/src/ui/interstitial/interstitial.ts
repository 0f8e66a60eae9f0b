import { background } from '../shared/client.js';
import { $, copyText } from '../shared/dom.js';
import { localize, t } from '../shared/i18n.js';
import { failureMessage } from './failure-text.js';

/**
 * Shown when HTTPS-first could not reach a site over HTTPS (connection or certificate error, or
 * no answer within 3 seconds). The address arrives URL-encoded in `?url=`, so `&` and `#` in it
 * survive (HTTPS Everywhere's first cancel page broke on them).
 */
function init(): void {
  localize();
  const params = new URLSearchParams(location.search);
  const raw = params.get('url') ?? '';
  let target: URL | null = null;
  try {
    target = new URL(raw);
  } catch {
    target = null;
  }
  // Only http(s) pages may be opened from here.
  if (target !== null && target.protocol !== 'http:' && target.protocol !== 'https:') target = null;
  $('#target-url').textContent = target?.href ?? raw;
  const reason = params.get('reason') ?? '';
  $('#reason-text').textContent = t(failureMessage(reason));
  $('#reason').textContent = reason === 'timeout' ? t('interstitialTimeout') : reason;
  const http = target === null ? null : target.href.replace(/^https:/, 'http:');
  for (const id of ['#http-once', '#http-always', '#copy-url']) ($(id) as HTMLButtonElement).disabled = http === null;
  showTried(params);

  $('#go-back').addEventListener('click', () => {
    // Two entries: the failed attempt replaced the page the user came from in some browsers.
    if (history.length > 1) history.back();
    else window.close();
  });
  $('#http-once').addEventListener('click', async () => {
    if (http === null) return;
    await background.request({ type: 'httpOnce', url: http });
    location.replace(http);
  });
  $('#http-always').addEventListener('click', async () => {
    if (http === null || target === null) return;
    await background.request({ type: 'siteAdd', list: 'httpAllowedSites', entry: target.host });
    location.replace(http);
  });
  $('#copy-url').addEventListener('click', async () => {
    if (http === null) return;
    await copyText(http);
    $('#copied').textContent = t('interstitialCopied');
    setTimeout(() => ($('#copied').textContent = ''), 1500);
  });
  $('#go-back').focus();
  document.body.dataset.ready = 'true';
}

/**
 * What the background tried before this page (`?tried=` JSON of {url, result}, `?http=` the
 * origin-only HTTP probe's result). The address bar can carry anything, so every field is
 * checked and shown as text only.
 */
function showTried(params: URLSearchParams): void {
  let tried: unknown;
  try {
    tried = JSON.parse(params.get('tried') ?? '[]');
  } catch {
    tried = [];
  }
  const list = $('#tried-list');
  const items = Array.isArray(tried) ? tried.slice(0, 10) : [];
  for (const item of items) {
    const { url, result } = (item ?? {}) as { url?: unknown; result?: unknown };
    if (typeof url !== 'string' || typeof result !== 'string') continue;
    const li = document.createElement('li');
    const code = document.createElement('code');
    code.textContent = url;
    li.append(code, ` — ${result === 'ok' ? t('interstitialTriedOk') : t(failureMessage(result))}`);
    list.append(li);
  }
  const http = params.get('http');
  const probe = $('#http-probe');
  probe.textContent = http === 'ok' ? t('interstitialHttpAnswers') : http !== null && http !== 'not tried' ? t('interstitialHttpSilent') : '';
  probe.hidden = probe.textContent === '';
  $('#tried').hidden = list.childElementCount === 0;
}

init();
