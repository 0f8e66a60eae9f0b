/**
 * Why a channel check or a channel definition was refused. Codes are stable so the CLI and
 * the options page can react to them; messages are for people.
 */
export type ChannelErrorCode =
  | 'invalid-definition'
  | 'invalid-key'
  | 'fetch-failed'
  | 'too-large'
  | 'invalid-timestamp'
  | 'not-newer'
  | 'older-than-defaults'
  | 'bad-signature'
  | 'corrupt-bundle'
  | 'bad-delta'
  | 'timestamp-mismatch'
  | 'below-minimum'
  | 'invalid-release'
  | 'wrong-channel'
  | 'key-revoked'
  | 'destination-outside-scope'
  | 'insecure-redirect'
  | 'storage-failed'
  | 'locked';

export class ChannelError extends Error {
  readonly code: ChannelErrorCode;

  constructor(code: ChannelErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ChannelError';
    this.code = code;
  }
}

/** Turns anything thrown into a one-line message without losing a ChannelError's code. */
export function describeError(err: unknown): {
  code: ChannelErrorCode | 'internal';
  message: string;
} {
  if (err instanceof ChannelError) return { code: err.code, message: err.message };
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}
