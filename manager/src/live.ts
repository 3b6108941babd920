// Live events over the service's socket.io stream (WEBSOCKET_ENABLED); callers poll when it cannot be joined.
import { io, type Socket } from 'socket.io-client';

export interface LiveEvent {
  id?: string;
  event: string;
  instance: string;
  data: unknown;
  date_time: string;
}

export type LiveStatus = 'connecting' | 'live' | 'unavailable';

/**
 * Joins `/<instance>` (or the global `/` with `instance` null) with the key in the handshake's auth, never the URL.
 * Reports every event and whether the stream is live; answers how to leave.
 */
export function followEvents(key: string, instance: string | null, onEvent: (event: LiveEvent) => void, onStatus: (status: LiveStatus) => void): () => void {
  const socket: Socket = io(`${location.origin}/${instance ?? ''}`, {
    path: '/socket.io/',
    auth: { apikey: key },
    transports: ['websocket'],
    reconnectionAttempts: 5,
    reconnectionDelayMax: 5000,
    timeout: 5000,
  });
  onStatus('connecting');
  socket.on('connect', () => onStatus('live'));
  socket.on('connect_error', () => onStatus('unavailable'));
  socket.on('disconnect', () => onStatus('unavailable'));
  socket.onAny((name: string, payload: unknown) => {
    if (payload && typeof payload === 'object') onEvent({ ...(payload as LiveEvent), event: name });
  });
  return () => {
    socket.removeAllListeners();
    socket.disconnect();
  };
}
