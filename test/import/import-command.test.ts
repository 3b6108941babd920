// The import as a command (`npm run import:evolution -- …`, a child process on Switchboard's configured store): its
// lines, its exit codes (0 all done, 1 an instance failed, 2 it could not run), --only, --dry-run and --replace.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProxyStore } from '../../src/instances/proxies.js';
import { openStore } from '../../src/platform/store/db.js';
import { appOnStore, storeKeys } from '../support/app-on-store.js';
import { hashApiKey } from '../../src/platform/util/api-keys.js';
import { dropPostgresSchema, pgUrl, postgresAvailable } from '../support/postgres.js';
import {
  evolutionOnPostgres,
  instanceRow,
  linkedCreds,
  rowId,
  sessionCredsText,
  signalKeys,
  writeKeysFolder,
  type EvolutionDeployment,
} from '../support/evolution.js';

const root = resolve(import.meta.dirname, '..', '..');
const tsxBin = join(root, 'node_modules', '.bin', 'tsx');
const pgUp = await postgresAvailable('the import command (Evolution on PostgreSQL) is');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the command as the npm script does, with Switchboard's settings in its environment. */
function runCommand(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((done) => {
    execFile(tsxBin, ['src/import/cli.ts', ...args], { cwd: root, env: { ...process.env, ...env }, timeout: 180_000 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

const storeKinds = [
  { name: 'sqlite', uri: (dir: string) => `file:${join(dir, 'switchboard.db')}`, drop: async () => undefined },
  { name: 'postgres', uri: () => `${pgUrl}?schema=${schema}`, drop: () => dropPostgresSchema(schema) },
];
const schema = `t_${randomBytes(6).toString('hex')}`;

describe.skipIf(!pgUp)('npm run import:evolution', () => {
  let evo: EvolutionDeployment;
  const good = `good-${randomBytes(3).toString('hex')}`;
  const broken = `broken-${randomBytes(3).toString('hex')}`;
  let goodToken: string;
  let goodId: string;
  const dataDirs: string[] = [];

  beforeAll(async () => {
    evo = await evolutionOnPostgres();
    const row = instanceRow(good);
    goodToken = String(row.token);
    goodId = String(row.id);
    const creds = linkedCreds('5511999990011');
    await evo.insert('Instance', row);
    await evo.insert('Session', { id: rowId(), sessionId: row.id, creds: sessionCredsText(creds), createdAt: new Date() });
    writeKeysFolder(evo.instancesDir, String(row.id), signalKeys(creds, 5));
    await evo.insert('Proxy', {
      id: rowId(),
      instanceId: row.id,
      enabled: true,
      host: '10.1.2.3',
      port: '1080',
      protocol: 'socks',
      username: 'proxy-user',
      password: 'proxy-secret',
      updatedAt: new Date(),
    });
    const brokenRow = instanceRow(broken);
    await evo.insert('Instance', brokenRow);
    await evo.insert('Session', { id: rowId(), sessionId: brokenRow.id, creds: 'not json at all', createdAt: new Date() });
  }, 60_000);

  afterAll(async () => {
    await evo?.dispose();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    await storeKinds[1].drop();
  });

  it('--help prints the usage; a missing --from, or an Evolution out of reach, exits 2 with a line and touches no store', async () => {
    const help = await runCommand(['--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--instances-dir PATH');
    const missing = await runCommand([], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('import:evolution: --from is required');
    // Evolution out of reach: said in one line, before Switchboard's store is touched.
    const dir = mkdtempSync(join(tmpdir(), 'sb-import-'));
    dataDirs.push(dir);
    const unreachable = await runCommand(['--from', 'postgresql://postgres@127.0.0.1:5432/no_such_evolution_db'], {
      DATABASE_CONNECTION_URI: `file:${join(dir, 'switchboard.db')}`,
      DATA_DIR: dir,
    });
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(
      /^import:evolution: cannot connect to Evolution's PostgreSQL at postgresql:\/\/127\.0\.0\.1:5432\/no_such_evolution_db: /,
    );
    expect(existsSync(join(dir, 'switchboard.db'))).toBe(false);
  }, 240_000);

  it("refuses to write into Evolution's own database (its env file used as it is)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-import-'));
    dataDirs.push(dir);
    const run = await runCommand(['--from', evo.uri], { DATABASE_CONNECTION_URI: evo.uri.replace(/^postgresql:/, 'postgres:'), DATA_DIR: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Switchboard's store (DATABASE_CONNECTION_URI) is Evolution's own database and schema");
  }, 240_000);

  for (const kind of storeKinds) {
    it(`on ${kind.name}: a dry run, the import (exit 1: one failed), a second run and --replace, each with its lines`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sb-import-'));
      dataDirs.push(dir);
      const env = {
        DATABASE_CONNECTION_URI: kind.uri(dir),
        DATA_DIR: dir,
        AUTHENTICATION_API_KEY: `global-${randomBytes(8).toString('hex')}`,
        LOG_LEVEL: 'warn',
      };
      const base = ['--from', evo.uri, '--instances-dir', evo.instancesDir];

      const dry = await runCommand([...base, '--dry-run'], env);
      expect(dry.code, dry.stderr).toBe(1);
      expect(dry.stdout).toMatch(new RegExp(`\\] ${good}: would import: WHATSAPP-BAILEYS; session with \\d+ signal keys`));
      expect(dry.stdout).toContain('Dry run: nothing was written.');

      const first = await runCommand(base, env);
      expect(first.code, first.stderr).toBe(1);
      expect(first.stdout).toMatch(new RegExp(`\\] ${good}: imported: WHATSAPP-BAILEYS; session with \\d+ signal keys`));
      expect(first.stdout).toContain(`${broken}: FAILED: Session.creds is not valid JSON`);
      expect(first.stdout).toMatch(/Summary: 1 imported, 0 skipped, 1 failed/);

      const again = await runCommand([...base, '--only', good], env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain(`[1/1] ${good}: skipped: already in Switchboard (--replace overwrites it)`);

      const replaced = await runCommand([...base, '--only', good, '--replace'], env);
      expect(replaced.code, replaced.stderr).toBe(0);
      expect(replaced.stdout).toMatch(new RegExp(`\\[1/1\\] ${good}: imported: .*replacing the instance of this name`));

      const store = await openStore(env.DATABASE_CONNECTION_URI);
      try {
        const rows = await store.db.selectFrom('instances').select(['name', 'apikey_hash']).execute();
        // One instance, answering to the token Evolution's clients hold.
        expect(rows).toEqual([{ name: good, apikey_hash: hashApiKey(goodToken) }]);
        expect(await store.db.selectFrom('sessions').select('instance_id').execute()).toHaveLength(1);
        // --replace replaced the proxy with Evolution's: one row still.
        expect(await store.db.selectFrom('instance_proxies').select(['instance_id', 'protocol']).execute()).toEqual([
          { instance_id: goodId, protocol: 'socks5' },
        ]);
      } finally {
        await store.close();
      }
    }, 600_000);
  }

  it('beside a running service: on PostgreSQL it imports (the service picks the instance up at its next start); on SQLite it says the store is in use', async () => {
    const runningSchema = `t_${randomBytes(6).toString('hex')}`;
    const uri = `${pgUrl}?schema=${runningSchema}`;
    const keys = storeKeys(uri);
    dataDirs.push(keys.dataDir);
    const env = {
      DATABASE_CONNECTION_URI: uri,
      DATA_DIR: keys.dataDir,
      AUTHENTICATION_API_KEY: keys.globalKey,
      SECRETS_KEY: keys.secretsKey.toString('base64'),
    };
    const store = await openStore(uri);
    try {
      const running = await appOnStore(store, keys);
      try {
        const run = await runCommand(['--from', evo.uri, '--instances-dir', evo.instancesDir, '--only', good], env);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toContain('Imported instances connect when Switchboard starts (restart a running Switchboard to pick them up).');
        expect(run.stdout).toContain(`Instances going out through a proxy: ${good}. Their proxies were not contacted by the import:`);
        expect((await running.api('GET', 'instance/fetchInstances')).status).toBe(200);
      } finally {
        await running.close();
      }
      const restarted = await appOnStore(store, keys);
      try {
        const own = await restarted.api('GET', 'instance/fetchInstances', { key: goodToken });
        expect(own.status).toBe(200);
        expect(own.body.map((e: { instance: { instanceName: string } }) => e.instance.instanceName)).toEqual([good]);
        // The command sealed the proxy's password with the key the service opens it with.
        const proxy = await restarted.api('GET', `proxy/find/${good}`, { key: goodToken });
        expect(proxy.body).toMatchObject({ enabled: true, host: '10.1.2.3', port: '1080', protocol: 'socks5', username: 'proxy-user', password: '********' });
        expect((await new ProxyStore(store.db, restarted.services.box).inEffect(goodId))?.password).toBe('proxy-secret');
      } finally {
        await restarted.close();
      }
    } finally {
      await store.close();
      await dropPostgresSchema(runningSchema);
    }

    const dir = mkdtempSync(join(tmpdir(), 'sb-import-'));
    dataDirs.push(dir);
    const sqliteUri = `file:${join(dir, 'switchboard.db')}`;
    const sqliteKeys = { ...storeKeys(sqliteUri), dataDir: dir };
    const sqliteStore = await openStore(sqliteUri);
    const running = await appOnStore(sqliteStore, sqliteKeys);
    try {
      const run = await runCommand(['--from', evo.uri, '--instances-dir', evo.instancesDir], { DATABASE_CONNECTION_URI: sqliteUri, DATA_DIR: dir });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('import:evolution: DATABASE_CONNECTION_URI: another Switchboard process is using the SQLite database');
    } finally {
      await running.close();
      await sqliteStore.close();
    }
  }, 600_000);
});
