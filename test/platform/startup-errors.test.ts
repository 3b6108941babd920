// Start-up failures as the real process reports them: one line on standard error naming the setting and what to fix,
// a non-zero exit code, no stack trace unless LOG_LEVEL=debug; a port in use stops the start before the store opens.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pgUrl, postgresAvailable } from '../support/postgres.js';
import { freePort, killService, serviceSetup, startService, waitUntilUp } from '../support/service-process.js';

const pgUp = await postgresAvailable('the start-up failures that reach PostgreSQL are');
const dir = mkdtempSync(join(tmpdir(), 'sb-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Failure {
  code: number | null;
  stderr: string;
}

/** Starts the service with `settings` and waits (bounded) for it to exit; answers its exit code and standard error. */
async function failedStart(settings: Record<string, string>): Promise<Failure> {
  const { env } = await serviceSetup(join(dir, 'data'), `file:${join(dir, 'default.db')}`);
  const service = startService({ ...env, ...settings });
  // 'close' comes once the process has exited and its output has been read to the end.
  const closed = new Promise<void>((resolve) => service.child.on('close', () => resolve()));
  const timedOut = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 60_000).unref());
  const outcome = await Promise.race([closed, timedOut]);
  if (outcome === 'timeout') {
    process.kill(-(service.child.pid ?? 0), 'SIGKILL');
    throw new Error(`the service did not exit within 60 s:\n${service.output.join('')}`);
  }
  return { code: await service.exited, stderr: service.errors.join('') };
}

/** The failure is exactly one line, `expected`, with no stack frames. */
function expectOneLine(failure: Failure, expected: RegExp) {
  expect(failure.code, failure.stderr).not.toBe(0);
  expect(failure.code, failure.stderr).not.toBeNull();
  const lines = failure.stderr.trimEnd().split('\n');
  expect(lines, failure.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(expected);
  expect(failure.stderr).not.toMatch(/^\s+at /m);
}

describe('start-up failures of the database', () => {
  it('names an unknown PostgreSQL host', async () => {
    const failure = await failedStart({ DATABASE_CONNECTION_URI: 'postgres://nope.invalid:1/x' });
    expectOneLine(failure, /^DATABASE_CONNECTION_URI: cannot reach PostgreSQL at nope\.invalid:1 \(host name (not found|lookup failed)/);
  }, 90_000);

  it('names a refused PostgreSQL port', async () => {
    const port = await freePort();
    const failure = await failedStart({ DATABASE_CONNECTION_URI: `postgresql://postgres@127.0.0.1:${port}/test` });
    expectOneLine(failure, new RegExp(`^DATABASE_CONNECTION_URI: cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port} \\(connection refused`));
  }, 90_000);

  it.skipIf(!pgUp)(
    'names a missing database and how to create it',
    async () => {
      const url = new URL(pgUrl);
      url.pathname = '/switchboard_no_such_database';
      const failure = await failedStart({ DATABASE_CONNECTION_URI: url.toString() });
      expectOneLine(failure, /^DATABASE_CONNECTION_URI: PostgreSQL at .+ has no database "switchboard_no_such_database" \(create it/);
    },
    90_000,
  );

  it.skipIf(!pgUp)(
    'names a login PostgreSQL refuses',
    async () => {
      const url = new URL(pgUrl);
      url.username = 'switchboard_no_such_role';
      url.password = 'wrong';
      const failure = await failedStart({ DATABASE_CONNECTION_URI: url.toString() });
      expectOneLine(failure, /^DATABASE_CONNECTION_URI: PostgreSQL at .+ refused the login \(.*switchboard_no_such_role/);
      expect(failure.stderr).not.toContain('wrong');
    },
    90_000,
  );

  it('names an SQLite path that cannot be created', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a folder');
    const failure = await failedStart({ DATABASE_CONNECTION_URI: `file:${join(file, 'switchboard.db')}` });
    expectOneLine(
      failure,
      /^DATABASE_CONNECTION_URI: cannot open the SQLite database at .+a-file\/switchboard\.db \(a part of the path is a file, not a folder\)$/,
    );
  }, 90_000);

  it('names an SQLite path that cannot be opened', async () => {
    const failure = await failedStart({ DATABASE_CONNECTION_URI: `file:${dir}` });
    expectOneLine(failure, /^DATABASE_CONNECTION_URI: cannot open the SQLite database at .+ \(unable to open database file/);
  }, 90_000);

  it('names a schema that is not a plain identifier', async () => {
    const failure = await failedStart({ DATABASE_CONNECTION_URI: `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=evo-api` });
    expect(failure.code).not.toBe(0);
    expect(failure.stderr).toMatch(/DATABASE_CONNECTION_URI has schema="evo-api", which is not a plain schema name/);
  }, 90_000);

  it('shows the stack trace under LOG_LEVEL=debug', async () => {
    const failure = await failedStart({ DATABASE_CONNECTION_URI: 'postgres://nope.invalid:1/x', LOG_LEVEL: 'debug' });
    expect(failure.code).not.toBe(0);
    expect(failure.stderr).toMatch(/^DATABASE_CONNECTION_URI: cannot reach PostgreSQL at nope\.invalid:1/);
    expect(failure.stderr).toMatch(/^\s+at /m);
  }, 90_000);
});

describe('start-up failure of the HTTP port', () => {
  let holder: Server | undefined;
  afterAll(() => holder?.close());

  it('names a port in use, before it opens the store or starts anything', async () => {
    const port = await freePort();
    holder = createServer();
    await new Promise<void>((resolve) => holder!.listen(port, '127.0.0.1', resolve));
    const database = join(dir, 'never-opened', 'switchboard.db');
    const failure = await failedStart({ SERVER_PORT: String(port), DATABASE_CONNECTION_URI: `file:${database}` });
    expectOneLine(failure, new RegExp(`^SERVER_PORT: port ${port} is already in use`));
    expect(existsSync(database)).toBe(false);
  }, 90_000);
});

describe('SQLite is a one-node store', () => {
  it('refuses a second process on the same SQLite file, and starts again once the first is killed', async () => {
    const database = `file:${join(dir, 'one-node', 'switchboard.db')}`;
    const first = await serviceSetup(join(dir, 'one-node-data'), database);
    const running = startService(first.env);
    await waitUntilUp(first.base, running);

    const failure = await failedStart({ DATABASE_CONNECTION_URI: database });
    expectOneLine(
      failure,
      /^DATABASE_CONNECTION_URI: another Switchboard process is using the SQLite database at .+one-node\/switchboard\.db; SQLite is a one-node store/,
    );
    // The running node is untouched by the refused one.
    expect((await fetch(`${first.base}/health`)).status).toBe(200);

    // A crash leaves no stale lock behind: the operating system drops it with the process.
    await killService(running);
    const next = await serviceSetup(join(dir, 'one-node-data'), database);
    const restarted = startService(next.env);
    await waitUntilUp(next.base, restarted);
    await killService(restarted);
  }, 180_000);
});
