/**
 * An update channel given by the URL of its JSON definition (what a channel's publisher links
 * to), fetched once: https only (plain HTTP would let the network choose the signing key), no
 * cookies, at most 64 KB, JSON text handed to the same parser as a pasted definition.
 */
export const MAX_DEFINITION_BYTES = 64 * 1024;

export async function fetchChannelDefinition(
  url: unknown,
  fetchFn: typeof fetch = fetch,
  timeoutMs = 15_000,
): Promise<{ ok: true; json: string } | { ok: false; error: string }> {
  let u: URL;
  try {
    u = new URL(String(url).trim());
  } catch {
    return { ok: false, error: 'not a web address' };
  }
  if (u.protocol !== 'https:') return { ok: false, error: 'the address must start with https://' };
  let response: Response;
  try {
    response = await fetchFn(u.href, {
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'follow',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    return {
      ok: false,
      error: `${u.href}: could not be fetched (${e instanceof Error ? e.message : String(e)})`,
    };
  }
  if (!response.ok)
    return { ok: false, error: `${u.href}: the server answered ${response.status}` };
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_DEFINITION_BYTES)
    return {
      ok: false,
      error: `${u.href}: larger than ${MAX_DEFINITION_BYTES / 1024} KB, not a channel definition`,
    };
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.length > MAX_DEFINITION_BYTES)
    return {
      ok: false,
      error: `${u.href}: larger than ${MAX_DEFINITION_BYTES / 1024} KB, not a channel definition`,
    };
  try {
    return { ok: true, json: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, error: `${u.href}: not UTF-8 text` };
  }
}
