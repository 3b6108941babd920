// Evolution's error envelope, and the one table that turns an error code into an HTTP status.
import type { CodedError, ErrorCode } from '../../core/errors.js';

const statusOfCode: Record<ErrorCode, number> = {
  invalid_input: 400,
  not_available: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  too_large: 413,
  unsupported_media_type: 415,
  conflict: 422,
  provider_refused: 400,
  provider_failed: 502,
  unavailable: 503,
  internal: 500,
};

const reasonPhrases: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  431: 'Request Header Fields Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** The HTTP status a coded error answers with. */
export function statusOf(error: Pick<CodedError, 'code'>): number {
  return statusOfCode[error.code];
}

function reasonPhrase(status: number): string {
  return reasonPhrases[status] ?? 'Error';
}

export interface ErrorEnvelope {
  status: number;
  error: string;
  response: { message: string[] };
}

export function envelope(status: number, messages: string[]): ErrorEnvelope {
  return { status, error: reasonPhrase(status), response: { message: messages } };
}
