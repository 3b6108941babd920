// Opens Evolution's database from its connection URI: PostgreSQL or MySQL/MariaDB, read-only.
import type { EvolutionDatabase } from './evolution-database.js';
import { openMysqlEvolution } from './mysql-database.js';
import { openPostgresEvolution } from './postgres-database.js';
import { ImportProblem } from './problem.js';

/** Opens Evolution's database from its connection URI (Evolution's DATABASE_CONNECTION_URI). */
export async function openEvolutionDatabase(uri: string): Promise<EvolutionDatabase> {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ImportProblem("--from must be a postgresql:// or mysql:// URI (Evolution's DATABASE_CONNECTION_URI)");
  }
  if (url.protocol === 'postgres:' || url.protocol === 'postgresql:') return openPostgresEvolution(url);
  if (url.protocol === 'mysql:' || url.protocol === 'mariadb:') return openMysqlEvolution(url);
  throw new ImportProblem(`--from must be a postgresql:// or mysql:// URI (Evolution's DATABASE_CONNECTION_URI), not ${url.protocol}//…`);
}
