import { background } from '../shared/client.js';
import { $, copyText, hostNode } from '../shared/dom.js';
import { localize, t } from '../shared/i18n.js';
import { failureMessage } from './failure-text.js';
import { readFallbackPage, type FallbackPageParams } from '../../https-first/fallback-address.js';
import { ext } from '../../platform/browser-api.js';

/**
 * Shown when HTTPS-first could not reach a site over HTTPS (connection, name or certificate
 * error, or no answer within 3 seconds). Like the browsers' own HTTPS-Only page: one heading,
 * two short paragraphs, "Go back" and "Continue to HTTP site"; the rest under "More options".
 * The address arrives URL-encoded in `?url=`, so `&` and `#` in it survive (HTTPS Everywhere's
 * first cancel page broke on them). Any site can open this page with any query: every
 * parameter is checked and shown as text only.
 */
function init(): void {
  localize();
  const params = readFallbackPage(location.search);
  const target = webUrl(params.url);
  $('#target-url').textContent = target?.href ?? params.url ?? '';
  const reason = params.reason;
  withHost($('#lead-host'), 'fallbackLead', target?.hostname ?? '');
  $('#reason-text').textContent = t(failureMessage(reason));
  $('#reason').textContent = reason === 'timeout' ? t('fallbackTimeout') : reason;
  const http = target === null ? null : target.href.replace(/^https:/, 'http:');
  for (const id of ['#http-once', '#http-always', '#copy-url'])
    ($(id) as HTMLButtonElement).disabled = http === null;
  showTwin(params.twin, target);
  showTried(params);

  $('#go-back').addEventListener('click', () => void goBack(params.back));
  // Portal is known before any click: on a sign-in network, continuing holds for this tab only.
  const failure = failureMessage(reason);
  $('#http-once').addEventListener('click', async () => {
    if (http === null) return;
    const tabId =
      failure === 'failureCaptivePortal' ? (await ext.tabs.getCurrent())?.id : undefined;
    await background.request({
      type: 'httpOnce',
      url: http,
      ...(tabId === undefined ? {} : { tabId }),
    });
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
    $('#copied').textContent = t('fallbackCopied');
    setTimeout(() => ($('#copied').textContent = ''), 1500);
  });
  // The background's CAPTIVE_PORTAL_REASON (https-first/captive-portal.ts), as failure-text.ts reads it.
  const portal = failure === 'failureCaptivePortal';
  if (portal) showPortal(target);
  else $('#go-back').focus();
  document.body.dataset.ready = 'true';
}

/**
 * A sign-in network (captive portal): what the user needs first is the network's sign-in page,
 * as Chrome's own "Connect" gives it. It opens in a new tab through the portal probe's address,
 * so the site itself is not loaded over HTTP on that network; "Try again" then retries HTTPS.
 * Going back and continuing over HTTP stay as the lesser choices.
 */
function showPortal(target: URL | null): void {
  $('#portal').hidden = false;
  $('#go-back').classList.remove('primary');
  // Continuing is for this tab alone here (the background keys it to the tab).
  $('#http-once').textContent = t('fallbackHttpOnceTab');
  const lasts = document.querySelector('[data-i18n="fallbackLasts"]');
  if (lasts !== null) lasts.textContent = t('fallbackLastsTab');
  $('#portal-sign-in').addEventListener('click', async () => {
    const answer = await background.request<{ ok?: boolean; url?: string }>({
      type: 'portalSignIn',
    });
    if (answer.ok !== true || answer.url === undefined) return;
    await ext.tabs.create({ url: answer.url, active: true });
    $('#portal-opened').textContent = t('fallbackPortalOpened');
  });
  $('#portal-retry').addEventListener('click', () => {
    if (target !== null) location.replace(target.href);
  });
  $('#portal-sign-in').focus();
}

/** A message around a host name that wraps only at the host's dots (hostNode). */
function withHost(el: HTMLElement, message: string, host: string): void {
  const mark = '\u0001';
  const [before = '', after = ''] = t(message, [mark]).split(mark);
  el.replaceChildren(before, hostNode(host), after);
}

/** An absolute http(s) URL, or null: only web pages may be opened from here. */
function webUrl(raw: string | null): URL | null {
  if (raw === null) return null;
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : null;
  } catch {
    return null;
  }
}

/**
 * Back past the failed attempt: `skip` entries (this page, and the browser's error page when
 * one was committed). With nothing to go back to, a new-tab page takes this tab's place.
 */
async function goBack(skip: number): Promise<void> {
  if (history.length > skip) {
    history.go(-skip);
    return;
  }
  const tab = await ext.tabs.getCurrent();
  if (tab?.id === undefined) {
    window.close();
    return;
  }
  await ext.tabs.create({ windowId: tab.windowId, index: tab.index, active: true });
  await ext.tabs.remove(tab.id);
}

/**
 * The www. twin (or bare host) that answered over HTTPS with a success status: a choice for
 * the user, who knows whether it is the same site. Shown only when it is another host of the
 * same site, over https.
 */
function showTwin(raw: string | null, target: URL | null): void {
  const twin = webUrl(raw);
  if (twin === null || target === null || twin.protocol !== 'https:') return;
  const a = target.hostname.replace(/^www\./, '');
  const b = twin.hostname.replace(/^www\./, '');
  if (a !== b || twin.hostname === target.hostname) return;
  const link = $('#twin-link') as HTMLAnchorElement;
  link.href = twin.href;
  withHost(link, 'fallbackTwin', twin.hostname);
  $('#twin').hidden = false;
}

/** What the background tried before this page, and the origin-only HTTP probe's result. */
function showTried(params: FallbackPageParams): void {
  const list = $('#tried-list');
  for (const { url, result } of params.tried) {
    const li = document.createElement('li');
    const code = document.createElement('code');
    code.textContent = url;
    li.append(code, ` — ${attemptText(result)}`);
    list.append(li);
  }
  const http = params.http;
  const probe = $('#http-probe');
  probe.textContent =
    http === 'ok'
      ? t('fallbackHttpAnswers')
      : http !== null && http !== 'not tried'
        ? t('fallbackHttpSilent')
        : '';
  probe.hidden = probe.textContent === '';
  $('#tried').hidden = list.childElementCount === 0;
}

/** One attempt's outcome in words: answered, answered with an error status, or why it failed. */
function attemptText(result: string): string {
  if (result === 'ok') return t('fallbackTriedOk');
  const status = /^HTTP (\d{3})$/.exec(result);
  if (status !== null) return t('fallbackTriedStatus', [status[1] as string]);
  if (result === 'redirect') return t('fallbackTriedRedirect');
  return t(failureMessage(result));
}

init();
