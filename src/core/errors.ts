// The coded errors every floor throws: a code saying what kind of failure it is, and messages a person can act on.

/**
 * What went wrong, in words of the domain; the HTTP layer alone turns a code into a status.
 * - `invalid_input`: the request is wrong; its message says what to fix.
 * - `not_available`: the instance's integration cannot do this operation.
 * - `unauthenticated`, `forbidden`, `not_found`: who asks, whether they may, whether it exists.
 * - `too_large`, `unsupported_media_type`: the request's size or content type.
 * - `conflict`: the request contradicts one made before (an idempotency key reused with another body).
 * - `provider_refused`, `provider_failed`: the messenger's provider refused the request, or failed to answer it usefully.
 * - `unavailable`: cannot be done for now; try again later.
 * - `internal`: a failure of the service itself.
 */
export type ErrorCode =
  | 'invalid_input'
  | 'not_available'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'too_large'
  | 'unsupported_media_type'
  | 'conflict'
  | 'provider_refused'
  | 'provider_failed'
  | 'unavailable'
  | 'internal';

/** An error meant for the caller: a code and messages a person can act on. */
export class CodedError extends Error {
  readonly messages: string[];

  constructor(
    readonly code: ErrorCode,
    messages: string | string[],
  ) {
    const list = Array.isArray(messages) ? messages : [messages];
    super(list.join('; '));
    this.messages = list;
  }
}

export const invalidInput = (...messages: string[]) => new CodedError('invalid_input', messages);
export const unauthenticated = () => new CodedError('unauthenticated', 'Unauthorized');
export const forbidden = (...messages: string[]) => new CodedError('forbidden', messages);
export const notFound = (...messages: string[]) => new CodedError('not_found', messages);
export const tooLarge = (...messages: string[]) => new CodedError('too_large', messages);
export const unsupportedMediaType = (...messages: string[]) => new CodedError('unsupported_media_type', messages);
export const conflict = (...messages: string[]) => new CodedError('conflict', messages);
export const unavailable = (...messages: string[]) => new CodedError('unavailable', messages);
export const internal = (...messages: string[]) => new CodedError('internal', messages);
