import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { failureMessage } from '../src/ui/fallback/failure-text.js';

const messages = JSON.parse(
  readFileSync(new URL('../static/_locales/en/messages.json', import.meta.url), 'utf8'),
) as Record<string, { message: string }>;

describe('fallback page: errors in words', () => {
  it.each([
    ['timeout', 'failureTimeout'],
    ['net::ERR_CONNECTION_REFUSED', 'failureRefused'],
    ['NS_ERROR_CONNECTION_REFUSED', 'failureRefused'],
    ['net::ERR_CERT_DATE_INVALID', 'failureCertificate'],
    ['net::ERR_CERT_AUTHORITY_INVALID', 'failureCertificate'],
    ['SEC_ERROR_UNKNOWN_ISSUER', 'failureCertificate'],
    ['MOZILLA_PKIX_ERROR_SELF_SIGNED_CERT', 'failureCertificate'],
    ["Peer's Certificate issuer is not recognized.", 'failureCertificate'],
    ['net::ERR_SSL_PROTOCOL_ERROR', 'failureNoTls'],
    ['SSL received a record that exceeded the maximum permissible length.', 'failureNoTls'],
    ['net::ERR_CONNECTION_RESET', 'failureCutOff'],
    ['NS_ERROR_NET_ON_TLS_HANDSHAKE_ENDED', 'failureCutOff'],
    ['net::ERR_EMPTY_RESPONSE', 'failureCutOff'],
    ['net::ERR_CONNECTION_TIMED_OUT', 'failureTimedOut'],
    ['NS_ERROR_NET_TIMEOUT', 'failureTimedOut'],
    ['net::ERR_ADDRESS_UNREACHABLE', 'failureUnreachable'],
    ['net::ERR_NAME_NOT_RESOLVED', 'failureNoName'],
    ['NS_ERROR_UNKNOWN_HOST', 'failureNoName'],
    ['net::ERR_INVALID_RESPONSE', 'failureNoPage'],
    ['net::ERR_HTTP2_PROTOCOL_ERROR', 'failureNoPage'],
    ['net::ERR_SOMETHING_NEW', 'failureOther'],
    // The portal probe met a sign-in page: that comes first, whatever the error was.
    ['captive-portal: net::ERR_CERT_AUTHORITY_INVALID', 'failureCaptivePortal'],
    ['captive-portal: timeout', 'failureCaptivePortal'],
    ['', 'failureOther'],
  ])('%s → %s', (reason, message) => {
    expect(failureMessage(reason)).toBe(message);
    // Every explanation exists in the locale, in words without error codes.
    expect(messages[message]?.message).toMatch(/^The [^_]*\.$/);
  });
});
