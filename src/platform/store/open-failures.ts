// Why the store could not be opened, as one start-up line naming DATABASE_CONNECTION_URI and what to check.
import { resolve } from 'node:path';
import { StartupError } from '../startup-error.js';
import type { PostgresUri } from './pg-uri.js';

const setting = 'DATABASE_CONNECTION_URI';

/** Error codes of Node (system calls) and PostgreSQL (SQLSTATE), and pg's own messages, as short phrases. */
function codeOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const unreachable: Record<string, string> = {
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed; try again or check the DNS',
  ECONNREFUSED: 'connection refused; is PostgreSQL running and listening on that port?',
  ECONNRESET: 'the connection was closed by the other side',
  ETIMEDOUT: 'no answer in time',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** The start-up line for a failure to connect to PostgreSQL or to prepare its schema. */
export function postgresOpenFailure(error: unknown, uri: PostgresUri): StartupError {
  const code = codeOf(error);
  const message = messageOf(error);
  const at = `PostgreSQL at ${uri.address}`;
  if (code && code in unreachable) return new StartupError(setting, `cannot reach ${at} (${unreachable[code]})`, { cause: error });
  if (/timeout/i.test(message)) return new StartupError(setting, `cannot reach ${at} (no answer in time)`, { cause: error });
  if (code === '3D000') {
    return new StartupError(setting, `${at} has no database "${uri.database}" (create it, e.g. createdb ${uri.database}, or fix the name)`, { cause: error });
  }
  if (code === '28P01' || code === '28000') return new StartupError(setting, `${at} refused the login (${message})`, { cause: error });
  if (/SASL|password must be a string/.test(message)) {
    return new StartupError(setting, `${at} refused the login (it asks for a password; put it in the URI as user:password@)`, { cause: error });
  }
  if (code === '42501') return new StartupError(setting, `${at}: user "${uri.user}" lacks a privilege (${message})`, { cause: error });
  return new StartupError(setting, `cannot use ${at} (${message})`, { cause: error });
}

const fileProblems: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EEXIST: 'a part of the path is a file, not a folder',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EISDIR: 'the path is a folder',
  SQLITE_CANTOPEN: 'unable to open database file; check that the path is not a folder and that this user may write there',
  SQLITE_NOTADB: 'the file is not an SQLite database',
  SQLITE_READONLY: 'the file is read-only',
  SQLITE_PERM: 'permission denied',
};

/** The start-up line for a failure to create or open the SQLite file. */
export function sqliteOpenFailure(error: unknown, path: string): StartupError {
  const code = codeOf(error);
  const reason = (code && fileProblems[code]) ?? messageOf(error);
  return new StartupError(setting, `cannot open the SQLite database at ${resolve(path)} (${reason})`, { cause: error });
}
