// The error type every layer throws and the Evolution-style envelope it renders to.

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

export function reasonPhrase(status: number): string {
  return reasonPhrases[status] ?? 'Error';
}

/** An error meant for the API caller: an HTTP status and messages a person can act on. */
export class ApiError extends Error {
  readonly status: number;
  readonly messages: string[];

  constructor(status: number, messages: string | string[]) {
    const list = Array.isArray(messages) ? messages : [messages];
    super(list.join('; '));
    this.status = status;
    this.messages = list;
  }
}

export interface ErrorEnvelope {
  status: number;
  error: string;
  response: { message: string[] };
}

export function envelope(status: number, messages: string[]): ErrorEnvelope {
  return { status, error: reasonPhrase(status), response: { message: messages } };
}

export const badRequest = (...messages: string[]) => new ApiError(400, messages);
export const unauthorized = () => new ApiError(401, 'Unauthorized');
export const forbidden = (...messages: string[]) => new ApiError(403, messages);
export const notFound = (...messages: string[]) => new ApiError(404, messages);
export const payloadTooLarge = (...messages: string[]) => new ApiError(413, messages);
export const unprocessable = (...messages: string[]) => new ApiError(422, messages);
