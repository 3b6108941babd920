// Import benchmark: an Evolution deployment of N linked WhatsApp Web instances (settings, webhook, real Baileys creds
// and signal keys in its instances folder or its Redis) taken over into Switchboard's store. Prints the dry run (read
// and decode everything, write nothing), the import itself, and their ratio: what writing costs on top of reading.
//
//   npm run bench:import                                     # 1,000 instances, PostgreSQL source, folder keys, SQLite store
//   npm run bench:import -- --instances=200 --source=mariadb --keys=redis --store=postgres
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importEvolution, type ImportOptions } from '../src/import/run.js';
import { ProxyStore } from '../src/instances/proxies.js';
import { silentLogger } from '../src/platform/logger.js';
import { openStore } from '../src/platform/store/db.js';
import { loadConfig } from '../src/platform/config.js';
import { createServices } from '../src/services.js';
import {
  evolutionOnMariadb,
  evolutionOnPostgres,
  instanceRow,
  linkedCreds,
  REDIS_URL,
  rowId,
  sessionCredsText,
  signalKeys,
  writeKeysFolder,
  writeKeysRedis,
} from '../test/support/evolution.js';
import { benchArg, fmt, freshPostgresDatabase, loadAverage, renderTable } from './lib-bench.js';

let instances = 1_000;
let source = 'postgres';
let keyPlace = 'folder';
let storeKind = 'sqlite';
let preKeys = 30;
for (const arg of process.argv.slice(2)) {
  const option = benchArg(arg);
  if (option.name === 'instances') instances = Math.round(option.num());
  else if (option.name === 'source') source = option.value;
  else if (option.name === 'keys') keyPlace = option.value;
  else if (option.name === 'store') storeKind = option.value;
  else if (option.name === 'pre-keys') preKeys = Math.round(option.num());
  else throw new Error(`unknown option ${arg} (known: --instances=<n> --source=postgres|mariadb --keys=folder|redis --store=sqlite|postgres --pre-keys=<n>)`);
}

async function main(): Promise<void> {
  console.log(`Building an Evolution deployment of ${instances} linked instances (${source}, keys in ${keyPlace}, ${preKeys} pre-keys each)…`);
  const evo = source === 'mariadb' ? await evolutionOnMariadb() : await evolutionOnPostgres();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-import-'));
  const pgStore = storeKind === 'postgres' ? await freshPostgresDatabase('bench_import') : undefined;
  const storeUri = pgStore ? pgStore.uri : `file:${join(dataDir, 'switchboard.db')}`;
  try {
    let keysPerInstance = 0;
    const built = performance.now();
    for (let i = 0; i < instances; i++) {
      const row = instanceRow(`bench-${String(i).padStart(5, '0')}`, { ownerJid: `55119${String(i).padStart(8, '0')}@s.whatsapp.net` });
      const creds = linkedCreds(`55119${String(i).padStart(8, '0')}`);
      const keys = signalKeys(creds, preKeys);
      keysPerInstance = Object.values(keys).reduce((n, values) => n + Object.keys(values).length, 0);
      await evo.insert('Instance', row);
      await evo.insert('Setting', { id: rowId(), instanceId: row.id, rejectCall: true, msgCall: 'busy', readMessages: true, updatedAt: new Date() });
      await evo.insert('Webhook', {
        id: rowId(),
        instanceId: row.id,
        url: `http://127.0.0.1:9/hook/${i}`,
        headers: { authorization: `Bearer ${i}` },
        enabled: true,
        events: ['MESSAGES_UPSERT'],
        updatedAt: new Date(),
      });
      if (keyPlace === 'redis') await writeKeysRedis(evo, String(row.id), keys, creds);
      else {
        await evo.insert('Session', { id: rowId(), sessionId: row.id, creds: sessionCredsText(creds), createdAt: new Date() });
        writeKeysFolder(evo.instancesDir, String(row.id), keys);
      }
    }
    console.log(`  built in ${fmt((performance.now() - built) / 1000)} s (${keysPerInstance} signal keys per instance)`);

    const globalKey = `global-${randomBytes(8).toString('hex')}`;
    const config = loadConfig({ AUTHENTICATION_API_KEY: globalKey, DATA_DIR: dataDir, DATABASE_CONNECTION_URI: storeUri, LOG_LEVEL: 'silent' });
    const store = await openStore(storeUri);
    const services = createServices({ config, logger: silentLogger(), store, globalApiKey: globalKey, secretsKey: randomBytes(32) });
    await services.registry.load();
    const deps = {
      db: store.db,
      registry: services.registry,
      sinks: services.sinks,
      removal: services.removal,
      proxies: new ProxyStore(store.db, services.box),
      kinds: services.kinds,
      sinkCreation: services.sinkCreation,
      globalApiKey: globalKey,
    };
    const options: ImportOptions = {
      from: evo.uri,
      ...(keyPlace === 'redis' ? { redis: REDIS_URL } : { instancesDir: evo.instancesDir }),
      redisPrefix: evo.redisPrefix,
      dryRun: true,
      withHistory: false,
      replace: false,
    };
    const timed = async (dryRun: boolean) => {
      const started = performance.now();
      const summary = await importEvolution({ ...options, dryRun }, deps, () => undefined);
      const ms = performance.now() - started;
      const done = summary.outcomes.filter((o) => o.result === (dryRun ? 'would import' : 'imported')).length;
      if (done !== instances)
        throw new Error(`${dryRun ? 'dry run' : 'import'}: ${done} of ${instances} (${JSON.stringify(summary.outcomes.find((o) => o.result === 'failed'))})`);
      return ms;
    };
    const dry = await timed(true);
    const real = await timed(false);
    const rows = await store.db
      .selectFrom('session_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    await store.close();
    const totalKeys = instances * keysPerInstance;
    if (Number(rows.n) !== totalKeys) throw new Error(`expected ${totalKeys} session keys stored, found ${rows.n}`);
    console.log('');
    console.log(
      renderTable(
        ['run', 'seconds', 'ms per instance', 'keys per second'],
        [
          ['dry run (read + decode)', fmt(dry / 1000, 2), fmt(dry / instances, 2), fmt(totalKeys / (dry / 1000), 0)],
          ['import (read + decode + write)', fmt(real / 1000, 2), fmt(real / instances, 2), fmt(totalKeys / (real / 1000), 0)],
        ],
      ),
    );
    console.log(`\nimport / dry run: ${fmt(real / dry, 2)}  (${instances} instances, ${totalKeys} signal keys; ${loadAverage()})`);
  } finally {
    await evo.dispose();
    await pgStore?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
