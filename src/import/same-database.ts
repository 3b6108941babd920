// Whether Switchboard's store would be Evolution's own tables (Evolution's env file used as it is): refused, since the
// import never writes into Evolution's database.
import { isPostgresUri, readPostgresUri } from '../platform/store/pg-uri.js';

function place(uri: string): string | null {
  if (!isPostgresUri(uri)) return null;
  try {
    const parsed = readPostgresUri(uri);
    return `${parsed.address}/${parsed.database}/${parsed.schema ?? 'public'}`.toLowerCase();
  } catch {
    return null;
  }
}

/** True when both URIs name the same PostgreSQL database and schema. */
export function sameDatabase(evolutionUri: string, storeUri: string): boolean {
  const evolution = place(evolutionUri);
  return evolution !== null && evolution === place(storeUri);
}
