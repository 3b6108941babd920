// SQLite is a one-node store: a lock held beside the database file keeps a second process from using it at once.
import Database from 'better-sqlite3';
import { StartupError } from '../startup-error.js';

/** The held lock; `release` gives it up (the operating system also does when the process dies, even by kill -9). */
export interface OneNodeLock {
  readonly path: string;
  release(): void;
}

/** The lock file of the database at `databasePath` (absolute). */
function oneNodeLockPath(databasePath: string): string {
  return `${databasePath}-node.lock`;
}

/**
 * Takes the lock, or throws a start-up line when another process (or another store of this one) holds it. The lock is
 * a small SQLite file kept in exclusive locking mode: its file lock lives as long as the connection, and the operating
 * system drops it with the process, so a crashed node never leaves a stale lock behind (unlike a pid file).
 */
export function takeOneNodeLock(databasePath: string): OneNodeLock {
  const path = oneNodeLockPath(databasePath);
  const connection = new Database(path, { timeout: 0 });
  try {
    connection.pragma('locking_mode = EXCLUSIVE');
    connection.exec('create table if not exists holder (pid integer not null, since integer not null)');
    // The first write takes the exclusive lock; in this locking mode it is kept after the commit.
    connection.transaction(() => {
      connection.exec('delete from holder');
      connection.prepare('insert into holder (pid, since) values (?, ?)').run(process.pid, Date.now());
    })();
  } catch (error) {
    connection.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new StartupError(
        'DATABASE_CONNECTION_URI',
        `another Switchboard process is using the SQLite database at ${databasePath}; SQLite is a one-node store ` +
          '(stop the other process, give this one its own file, or point every node at one PostgreSQL database)',
        { cause: error },
      );
    }
    throw error;
  }
  return {
    path,
    release: () => {
      if (connection.open) connection.close();
    },
  };
}
