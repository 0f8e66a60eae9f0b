export { createHttpsifyFetch, HttpsRequiredError, type FetchInput, type HttpsifyFetchOptions, type UpgradeEvent } from './fetch-wrapper.js';
export { httpsifyInterceptor, type HttpsifyInterceptorOptions } from './interceptor.js';
export { isConnectionFailure, planRequest, POLICIES, type Policy, type RequestPlan, type Rewriter, type UpgradeReason } from './policy.js';
export { defaultRewriter } from './default-rewriter.js';
