export {
  createHttpsifyFetch,
  HttpsRequiredError,
  type FetchInit,
  type FetchInput,
  type HttpsifyFetch,
  type HttpsifyFetchOptions,
  type UpgradeEvent,
} from './fetch-wrapper.js';
export {
  httpsifyInterceptor,
  type HttpsifyInterceptorOptions,
  type InterceptorUpgradeEvent,
} from './interceptor.js';
export {
  CREDENTIAL_HEADERS,
  isConnectionFailure,
  planRequest,
  POLICIES,
  type Policy,
  type RequestPlan,
  type Rewriter,
  type UpgradeReason,
} from './policy.js';
export { defaultRewriter } from './default-rewriter.js';
