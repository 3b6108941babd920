// Whether the HTTP port can be listened on, asked before anything starts; a failure is one start-up line.
import { createServer } from 'node:net';
import { StartupError } from '../startup-error.js';

/** The start-up line for a failure to listen on `host`:`port` (the check's or the server's own). */
export function listenFailure(error: unknown, host: string, port: number): Error {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (code === 'EADDRINUSE') {
    return new StartupError(
      'SERVER_PORT',
      `port ${port} is already in use (another Switchboard or program listens there; stop it or choose another SERVER_PORT)`,
      {
        cause: error,
      },
    );
  }
  if (code === 'EACCES') {
    return new StartupError('SERVER_PORT', `no permission to listen on port ${port} (ports below 1024 need privileges; choose a higher SERVER_PORT)`, {
      cause: error,
    });
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new StartupError('SERVER_HOST', `cannot listen on ${host} (not an address of this machine; use 0.0.0.0 for all of them)`, { cause: error });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Listens on the port and closes it again at once: a second start on a port in use stops here, before it opens the
 * store or starts any connector (which would take the linked numbers over from the running service).
 */
export async function ensurePortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, () => resolve());
    });
  } catch (error) {
    throw listenFailure(error, host, port);
  }
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
