// A socket.io test client that records every event it receives and never reconnects (a refusal stays a refusal).
import { io as connectClient, type Socket as ClientSocket } from 'socket.io-client';
import type { WebsocketPayload } from '../../src/sinks/websocket/index.js';

export interface Client {
  socket: ClientSocket;
  received: WebsocketPayload[];
}

export function client(
  url: string,
  namespace: string,
  options: { auth?: Record<string, unknown>; query?: Record<string, string>; extraHeaders?: Record<string, string> } = {},
): Client {
  const socket = connectClient(`${url}${namespace}`, {
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    timeout: 5000,
    ...options,
  });
  const received: WebsocketPayload[] = [];
  socket.onAny((_event: string, payload: WebsocketPayload) => received.push(payload));
  return { socket, received };
}

/** Resolves once the client is connected; rejects with the refusal's message otherwise. */
export function connected(c: Client): Promise<void> {
  return new Promise((resolve, reject) => {
    if (c.socket.connected) return resolve();
    c.socket.once('connect', () => resolve());
    c.socket.once('connect_error', (err) => reject(new Error(`expected a connection, got connect_error: ${err.message}`)));
  });
}
