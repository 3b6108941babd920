// Browser origin policy (CORS_ORIGIN: `*` or a comma list) for the HTTP API and the socket.io endpoint.
import type { ServerOptions } from 'socket.io';

function origins(setting: string): string[] | '*' {
  const list = setting
    .split(',')
    .map((o) => o.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  return list.length === 0 || list.includes('*') ? '*' : list;
}

/** Requests without an Origin header (servers, CLIs) are always allowed; browsers only from the listed origins. */
export function originAllowed(origin: string | undefined, setting: string): boolean {
  const allowed = origins(setting);
  return origin === undefined || allowed === '*' || allowed.includes(origin.replace(/\/+$/, ''));
}

/** The `cors` option of the socket.io server (answers to long-polling requests). */
export function corsOption(setting: string): ServerOptions['cors'] {
  const allowed = origins(setting);
  return { origin: allowed === '*' ? '*' : allowed, credentials: false };
}
