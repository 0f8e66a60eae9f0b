// A user's program, type-checked by types.test.ts against the built package under each module
// resolution (never run): the wrapper is a drop-in for the global fetch, and takes undici's init.
import { createHttpsifyFetch } from '@httpsify/fetch';
import {
  Agent,
  FormData as UndiciFormData,
  Request as UndiciRequest,
  type RequestInit as UndiciRequestInit,
  type Response as UndiciResponse,
} from 'undici';

// The case: where the global fetch goes, the wrapper goes.
const dropIn: typeof fetch = createHttpsifyFetch();
globalThis.fetch = createHttpsifyFetch({ policy: 'prefer' });

export async function globalTypes(): Promise<Response> {
  const init: RequestInit = {
    method: 'POST',
    headers: new Headers({ 'content-type': 'text/plain' }),
    body: new FormData(),
    signal: AbortSignal.timeout(1000),
  };
  await dropIn(new Request('http://example.com/'), init);
  return dropIn('http://example.com/', { body: new URLSearchParams({ q: '1' }) });
}

export async function undiciTypes(
  f: ReturnType<typeof createHttpsifyFetch>,
): Promise<UndiciResponse> {
  const init: UndiciRequestInit = { dispatcher: new Agent(), body: new UndiciFormData() };
  await f(new UndiciRequest('http://example.com/'), init);
  const res = await f(new URL('http://example.com/'), { dispatcher: new Agent(), body: 'text' });
  // The response is both: undici's and the global one.
  const global: Response = res;
  return global === res ? res : res.clone();
}
