/**
 * Captive-portal check. Behind a hotel or airport login page every HTTPS attempt fails and the
 * HTTP page is the portal itself. The fallback page then says so; the user's click on "Continue"
 * opens the HTTP page, as for any other failure.
 * The probe is a plain-HTTP URL with a known answer (204, or 200 with "success"); a portal
 * answers with a redirect or its own page.
 */
/** How the fallback page's `?reason=` starts when the probe met a portal (failure-text.ts). */
export const CAPTIVE_PORTAL_REASON = 'captive-portal';

export type PortalState = 'open' | 'captive' | 'offline';

export async function probeCaptivePortal(
  probeUrl: string,
  fetchFn: typeof fetch = fetch,
  timeoutMs = 3000,
): Promise<PortalState> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetchFn(probeUrl, {
      redirect: 'manual',
      cache: 'no-store',
      signal: controller.signal,
      credentials: 'omit',
    });
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400))
      return 'captive';
    if (response.status === 204) return 'open';
    if (response.status === 200)
      return (await response.text()).trim() === 'success' ? 'open' : 'captive';
    return 'captive';
  } catch {
    return 'offline';
  } finally {
    clearTimeout(timer);
  }
}
