/**
 * What a network error means, in words for people who never saw an error code. The raw code
 * (`net::ERR_CONNECTION_REFUSED`, Firefox's `NS_ERROR_…` or NSS's message) stays on the page's
 * details line for whoever needs it.
 */
const KINDS: [RegExp, string][] = [
  // First: the background puts it before the raw error when its portal probe met a portal.
  [/^captive-portal/, 'failureCaptivePortal'],
  [/^timeout$/, 'failureTimeout'],
  [/CONNECTION_REFUSED/, 'failureRefused'],
  [/^net::ERR_CERT_|^SEC_ERROR_|^MOZILLA_PKIX_ERROR_|certificate|issuer/i, 'failureCertificate'],
  [/TIMED_OUT|NET_TIMEOUT/, 'failureTimedOut'],
  [
    /CONNECTION_(RESET|CLOSED)|EMPTY_RESPONSE|NET_RESET|NET_INTERRUPT|TLS_HANDSHAKE_ENDED/,
    'failureCutOff',
  ],
  [/ADDRESS_UNREACHABLE|TUNNEL_CONNECTION/, 'failureUnreachable'],
  [/NAME_NOT_RESOLVED|NAME_RESOLUTION_FAILED|UNKNOWN_HOST/, 'failureNoName'],
  [
    /INVALID_RESPONSE|INVALID_HTTP_RESPONSE|HTTP2_PROTOCOL|QUIC_PROTOCOL|PARTIAL_TRANSFER/,
    'failureNoPage',
  ],
  // Chromium's ERR_SSL_*, Firefox's SSL_ERROR_* and NSS messages ("SSL received a record…").
  [/^net::ERR_SSL_|^SSL_ERROR_|SSL|TLS/i, 'failureNoTls'],
];

/** The message name (in _locales) explaining `reason` (the fallback page's `?reason=`). */
export function failureMessage(reason: string): string {
  for (const [re, message] of KINDS) if (re.test(reason)) return message;
  return 'failureOther';
}
