// Reads the API key a socket.io client presented at its namespace handshake (auth payload, header or query).
import type { Socket } from 'socket.io';

export type HandshakeKey = { kind: 'none' } | { kind: 'malformed' } | { kind: 'given'; value: string };

type Handshake = Pick<Socket['handshake'], 'auth' | 'headers' | 'query'>;

/**
 * The first of `auth.apikey`, the `apikey` header and the `apikey` query parameter that is present.
 * A present value that is not one non-empty string (an array, a number) is malformed, never skipped,
 * so a client cannot smuggle a second key past the first.
 */
export function handshakeKey(handshake: Handshake): HandshakeKey {
  // The auth payload is whatever JSON the client sent: read it as unknown.
  const auth: unknown = handshake.auth;
  const fromAuth = auth && typeof auth === 'object' ? (auth as Record<string, unknown>).apikey : undefined;
  for (const candidate of [fromAuth, handshake.headers.apikey, handshake.query.apikey]) {
    if (candidate === undefined || candidate === null || candidate === '') continue;
    return typeof candidate === 'string' ? { kind: 'given', value: candidate } : { kind: 'malformed' };
  }
  return { kind: 'none' };
}
