// Taking an Evolution deployment over: its database on PostgreSQL and on MariaDB, its keys in a folder and in Redis,
// imported into Switchboard's store on SQLite and on PostgreSQL. After the import every instance is listed with its
// settings and destinations, old keys open their own instance only, the WhatsApp Web connector loads the very
// credentials and keys Evolution had, each proxy is kept (its password sealed, answered masked), a broken instance
// fails alone, a dry run writes nothing, a second run changes nothing and --replace replaces the proxy too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthenticationCreds } from 'baileys';
import { loadStoreAuth } from '../../src/connectors/whatsapp-web/auth-state.js';
import { importEvolution, type ImportOptions } from '../../src/import/run.js';
import { ProxyStore } from '../../src/instances/proxies.js';
import type { ImportSummary } from '../../src/import/report.js';
import { silentLogger } from '../../src/platform/logger.js';
import type { Store } from '../../src/platform/store/db.js';
import type { Services } from '../../src/services.js';
import { storeTargets } from '../support/harness.js';
import { appOnStore, loadedServices, removeDataDir, storeKeys, type StoreKeys } from '../support/app-on-store.js';
import {
  comparable,
  evolutionOnMariadb,
  evolutionOnPostgres,
  instanceRow,
  linkedCreds,
  mariadbAvailable,
  redisAvailable,
  rowId,
  sessionCredsText,
  signalKeys,
  writeKeysFolder,
  writeKeysRedis,
  type EvolutionDeployment,
  type KeySet,
} from '../support/evolution.js';
import { postgresAvailable } from '../support/postgres.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
type Json = any;

const targets = await storeTargets();
const sources = [
  { name: 'PostgreSQL', available: await postgresAvailable('the import from Evolution on PostgreSQL is'), build: evolutionOnPostgres },
  { name: 'MariaDB', available: await mariadbAvailable('the import from Evolution on MariaDB is'), build: evolutionOnMariadb },
];
const redisUp = await redisAvailable('the import of keys kept in Redis is');

interface Linked {
  name: string;
  id: string;
  token: string;
  creds: AuthenticationCreds;
  keys: KeySet;
}

interface Fixture {
  folder: Linked;
  redis: Linked;
  cloud: { name: string; token: string; number: string; businessId: string };
  channel: { name: string; token: string };
  unlinked: { name: string; token: string };
  brokenCreds: string;
  missingKeys: string;
  badName: string;
  badProxy: string;
}

/** Fills Evolution's tables, folder and Redis with an instance of every kind and three that cannot be imported. */
async function fill(evo: EvolutionDeployment, tag: string): Promise<Fixture> {
  const folderRow = instanceRow(`shop-${tag}`, {
    connectionStatus: 'open',
    ownerJid: '5511999990001@s.whatsapp.net',
    profileName: 'Shop One',
    profilePicUrl: 'https://pps.whatsapp.net/v/shop-one.jpg',
    number: '5511999990001',
  });
  const folderCreds = linkedCreds('5511999990001');
  const folderKeys = signalKeys(folderCreds);
  await evo.insert('Instance', folderRow);
  await evo.insert('Session', { id: rowId(), sessionId: folderRow.id, creds: sessionCredsText(folderCreds), createdAt: new Date() });
  writeKeysFolder(evo.instancesDir, String(folderRow.id), folderKeys);
  await evo.insert('Setting', {
    id: rowId(),
    instanceId: folderRow.id,
    rejectCall: true,
    msgCall: 'We call you back',
    groupsIgnore: true,
    alwaysOnline: false,
    readMessages: true,
    readStatus: false,
    syncFullHistory: true,
    wavoipToken: 'wavoip-123',
    updatedAt: new Date(),
  });
  await evo.insert('Webhook', {
    id: rowId(),
    instanceId: folderRow.id,
    url: 'http://127.0.0.1:9/evolution-hook',
    headers: { authorization: 'Bearer tenant-7', 'X-Tenant': 'acme' },
    enabled: true,
    events: ['MESSAGES_UPSERT', 'CONNECTION_UPDATE', 'CHAMA_AI_ACTION'],
    webhookByEvents: true,
    webhookBase64: true,
    updatedAt: new Date(),
  });
  await evo.insert('Websocket', { id: rowId(), instanceId: folderRow.id, enabled: true, events: ['MESSAGES_UPSERT'], updatedAt: new Date() });
  await evo.insert('Rabbitmq', { id: rowId(), instanceId: folderRow.id, enabled: true, events: ['SEND_MESSAGE'], updatedAt: new Date() });
  await evo.insert('Nats', { id: rowId(), instanceId: folderRow.id, enabled: false, events: [], updatedAt: new Date() });
  await evo.insert('Sqs', { id: rowId(), instanceId: folderRow.id, enabled: true, events: ['MESSAGES_UPSERT'], updatedAt: new Date() });
  await evo.insert('Proxy', {
    id: rowId(),
    instanceId: folderRow.id,
    enabled: true,
    host: '10.1.2.3',
    port: '3128',
    protocol: 'http',
    username: 'proxy-user',
    password: 'proxy-secret',
    updatedAt: new Date(),
  });
  await evo.insert('Chatwoot', {
    id: rowId(),
    instanceId: folderRow.id,
    enabled: true,
    accountId: '1',
    token: 'cw',
    url: 'http://127.0.0.1:9',
    updatedAt: new Date(),
  });
  await evo.insert('Typebot', { id: rowId(), instanceId: folderRow.id, url: 'http://127.0.0.1:9', typebot: 'flow', updatedAt: new Date() });
  const chat = '5511988887777@s.whatsapp.net';
  for (let i = 1; i <= 3; i++) {
    const fromMe = i === 2;
    await evo.insert('Message', {
      id: rowId(),
      instanceId: folderRow.id,
      key: { id: `3EB0IMPORTED${tag}${i}`, remoteJid: chat, fromMe },
      pushName: fromMe ? null : 'Carla',
      messageType: 'conversation',
      message: { conversation: `history ${i}` },
      source: fromMe ? 'web' : 'android',
      messageTimestamp: 1_732_000_000 + i,
      status: fromMe ? 'READ' : 'DELIVERY_ACK',
    });
  }
  await evo.insert('Chat', { id: rowId(), instanceId: folderRow.id, remoteJid: chat, name: 'Carla', labels: ['3'], unreadMessages: 2, updatedAt: new Date() });
  await evo.insert('Contact', { id: rowId(), instanceId: folderRow.id, remoteJid: chat, pushName: 'Carla', profilePicUrl: null, updatedAt: new Date() });
  // Evolution keeps WhatsApp's palette index as text; a colour that is no index cannot be a label here.
  await evo.insert('Label', {
    id: rowId(),
    instanceId: folderRow.id,
    labelId: '3',
    name: 'VIP',
    color: '5',
    createdAt: new Date(1_000),
    updatedAt: new Date(),
  });
  await evo.insert('Label', {
    id: rowId(),
    instanceId: folderRow.id,
    labelId: '1',
    name: 'New customer',
    color: '0',
    predefinedId: '1',
    createdAt: new Date(2_000),
    updatedAt: new Date(),
  });
  await evo.insert('Label', {
    id: rowId(),
    instanceId: folderRow.id,
    labelId: '9',
    name: 'Pink',
    color: '#ffc0cb',
    createdAt: new Date(3_000),
    updatedAt: new Date(),
  });

  // CACHE_REDIS_SAVE_INSTANCES=true: the creds are in the Redis hash too, and there is no Session row.
  const redisRow = instanceRow(`redis-shop-${tag}`, { ownerJid: '5511999990002@s.whatsapp.net' });
  const redisCreds = linkedCreds('5511999990002');
  const redisKeys = signalKeys(redisCreds, 12);
  await evo.insert('Instance', redisRow);
  await writeKeysRedis(evo, String(redisRow.id), redisKeys, redisCreds);
  // Evolution's `socks` is SOCKS5 (with the proxy resolving names).
  await evo.insert('Proxy', {
    id: rowId(),
    instanceId: redisRow.id,
    enabled: true,
    host: 'socks.example.net',
    port: '1080',
    protocol: 'socks',
    username: 'sock-user',
    password: 'sock-secret',
    updatedAt: new Date(),
  });

  const cloud = { name: `cloud-${tag}`, token: `EAAG${'x'.repeat(40)}${tag}`, number: '109876543210', businessId: '2233445566' };
  await evo.insert(
    'Instance',
    instanceRow(cloud.name, { integration: 'WHATSAPP-BUSINESS', token: cloud.token, number: cloud.number, businessId: cloud.businessId }),
  );
  const channelRow = instanceRow(`channel-${tag}`, { integration: 'EVOLUTION', number: 'route-42' });
  await evo.insert('Instance', channelRow);
  // Turned off in Evolution, which blanks what a proxy turned off had.
  await evo.insert('Proxy', {
    id: rowId(),
    instanceId: channelRow.id,
    enabled: false,
    host: '',
    port: '',
    protocol: '',
    username: '',
    password: '',
    updatedAt: new Date(),
  });
  // Created but never linked: Evolution wrote fresh creds (no `me`) and no keys.
  const unlinkedRow = instanceRow(`unlinked-${tag}`);
  await evo.insert('Instance', unlinkedRow);
  const { initAuthCreds } = await import('baileys');
  await evo.insert('Session', { id: rowId(), sessionId: unlinkedRow.id, creds: sessionCredsText(initAuthCreds()), createdAt: new Date() });

  const brokenRow = instanceRow(`broken-${tag}`);
  await evo.insert('Instance', brokenRow);
  await evo.insert('Session', { id: rowId(), sessionId: brokenRow.id, creds: '"{\\"noiseKey\\": {oops', createdAt: new Date() });
  const missingRow = instanceRow(`nokeys-${tag}`);
  await evo.insert('Instance', missingRow);
  await evo.insert('Session', { id: rowId(), sessionId: missingRow.id, creds: sessionCredsText(linkedCreds('5511999990009')), createdAt: new Date() });
  const badNameRow = instanceRow(`Loja Centro ${tag}`);
  await evo.insert('Instance', badNameRow);
  const badProxyRow = instanceRow(`ftp-proxied-${tag}`);
  await evo.insert('Instance', badProxyRow);
  await evo.insert('Proxy', {
    id: rowId(),
    instanceId: badProxyRow.id,
    enabled: true,
    host: '10.1.2.4',
    port: '21',
    protocol: 'ftp',
    username: '',
    password: '',
    updatedAt: new Date(),
  });

  return {
    folder: { name: String(folderRow.name), id: String(folderRow.id), token: String(folderRow.token), creds: folderCreds, keys: folderKeys },
    redis: { name: String(redisRow.name), id: String(redisRow.id), token: String(redisRow.token), creds: redisCreds, keys: redisKeys },
    cloud,
    channel: { name: String(channelRow.name), token: String(channelRow.token) },
    unlinked: { name: String(unlinkedRow.name), token: String(unlinkedRow.token) },
    brokenCreds: String(brokenRow.name),
    missingKeys: String(missingRow.name),
    badName: String(badNameRow.name),
    badProxy: String(badProxyRow.name),
  };
}

/** The whole content of the store's tables the import writes, for "nothing changed" comparisons. */
async function snapshot(store: Store): Promise<Record<string, unknown[]>> {
  const tables = ['instances', 'event_sinks', 'instance_proxies', 'sessions', 'session_keys', 'messages', 'chats', 'contacts', 'outbox'] as const;
  const result: Record<string, unknown[]> = {};
  for (const table of tables) {
    const rows = await store.db.selectFrom(table).selectAll().execute();
    result[table] = rows.map((row) => JSON.stringify(row)).sort();
  }
  return result;
}

/** The proxy store as the import and the service use it: the same class, sealing with the same key. */
const proxyStoreOf = (services: Services) => new ProxyStore(services.store.db, services.box);

function depsOf(services: Services) {
  return {
    db: services.store.db,
    registry: services.registry,
    sinks: services.sinks,
    removal: services.removal,
    proxies: proxyStoreOf(services),
    kinds: services.kinds,
    sinkCreation: services.sinkCreation,
    globalApiKey: services.globalApiKey,
  };
}

/** Runs the import on freshly loaded services (as the command line does), answering its summary and printed lines. */
async function runImport(store: Store, keys: StoreKeys, options: ImportOptions): Promise<{ summary: ImportSummary; lines: string[] }> {
  const lines: string[] = [];
  const services = await loadedServices(store, keys);
  const summary = await importEvolution(options, depsOf(services), (line) => lines.push(line));
  return { summary, lines };
}

const resultOf = (summary: ImportSummary, name: string) => summary.outcomes.find((o) => o.name === name);

let tagSeq = 0;

for (const source of sources) {
  for (const target of targets) {
    describe.skipIf(!source.available || !target.available || !redisUp)(`Evolution on ${source.name} into Switchboard on ${target.name}`, () => {
      let evo: EvolutionDeployment;
      let fx: Fixture;
      let store: Store;
      let dispose: () => Promise<void>;
      let keys: StoreKeys;
      let options: ImportOptions;
      let firstRun: { summary: ImportSummary; lines: string[] };

      beforeAll(async () => {
        evo = await source.build();
        fx = await fill(evo, `${++tagSeq}${source.name[0].toLowerCase()}${target.name[0]}`);
        const opened = await target.open();
        store = opened.store;
        dispose = opened.dispose;
        keys = storeKeys(opened.uri);
        options = {
          from: evo.uri,
          instancesDir: evo.instancesDir,
          redis: `redis://127.0.0.1:6379/0`,
          redisPrefix: evo.redisPrefix,
          dryRun: false,
          withHistory: true,
          replace: false,
        };
      }, 60_000);

      afterAll(async () => {
        await store?.close();
        await dispose?.();
        await evo?.dispose();
        if (keys) removeDataDir(keys);
      });

      it('a dry run reads everything, prints what it would do and writes nothing', async () => {
        const before = await snapshot(store);
        const { summary, lines } = await runImport(store, keys, { ...options, dryRun: true });
        expect(resultOf(summary, fx.folder.name)?.result).toBe('would import');
        expect(resultOf(summary, fx.brokenCreds)?.result).toBe('failed');
        expect(lines.at(-1)).toBe('Dry run: nothing was written.');
        expect(lines.some((l) => l.includes(`${fx.folder.name}: would import: WHATSAPP-BAILEYS; session with`))).toBe(true);
        expect(lines.find((l) => l.includes(`] ${fx.folder.name}: would import`))).toContain('proxy http://10.1.2.3:3128');
        expect(await snapshot(store)).toEqual(before);
      });

      it('imports every instance; a damaged one fails alone, with a line saying what is wrong', async () => {
        firstRun = await runImport(store, keys, options);
        const { summary, lines } = firstRun;
        const imported = summary.outcomes.filter((o) => o.result === 'imported').map((o) => o.name);
        expect(imported.sort()).toEqual([fx.folder.name, fx.redis.name, fx.cloud.name, fx.channel.name, fx.unlinked.name].sort());
        const failed = Object.fromEntries(summary.outcomes.filter((o) => o.result === 'failed').map((o) => [o.name, o.result === 'failed' ? o.reason : '']));
        expect(Object.keys(failed).sort()).toEqual([fx.brokenCreds, fx.missingKeys, fx.badName, fx.badProxy].sort());
        expect(failed[fx.brokenCreds]).toMatch(/^Session\.creds is not valid JSON/);
        expect(failed[fx.missingKeys]).toMatch(/^linked, but its signal keys are missing: no Redis hash .*, no folder /);
        expect(failed[fx.badName]).toMatch(/name cannot be a Switchboard instance name/);
        expect(failed[fx.badProxy]).toBe(
          'its proxy is refused: Proxy.protocol must be one of http, https, socks4, socks5 (got "ftp") (fix the Proxy row in Evolution\'s database, or turn it off there, and run the import again)',
        );
        expect(lines).toContain(`[${summary.outcomes.findIndex((o) => o.name === fx.brokenCreds) + 1}/9] ${fx.brokenCreds}: FAILED: ${failed[fx.brokenCreds]}`);
        // The proxy carried over is named without its credentials.
        expect(lines.find((l) => l.includes(`] ${fx.folder.name}: imported`))).toContain('; proxy http://10.1.2.3:3128');
        expect(lines.find((l) => l.includes(`] ${fx.redis.name}: imported`))).toContain('proxy socks5://socks.example.net:1080');
        expect(lines.find((l) => l.includes(`] ${fx.channel.name}: imported`))).toContain('proxy (disabled)');
        expect(lines.join('\n')).not.toMatch(/proxy-secret|sock-secret|proxy-user|sock-user/);
        // What Evolution had that does not carry over is listed, not dropped.
        const folderLines = lines.slice(lines.findIndex((l) => l.includes(`] ${fx.folder.name}: imported`)));
        const notCarried = folderLines
          .slice(
            1,
            folderLines.findIndex((l, i) => i > 0 && l.startsWith('[')),
          )
          .join('\n');
        for (const what of ['Chatwoot', 'Typebot (1)', 'SQS events', 'wavoip', 'CHAMA_AI_ACTION', 'labels without an id or a palette colour: "Pink"'])
          expect(notCarried).toContain(what);
        expect(notCarried).not.toContain('proxy');
        expect(lines.join('\n')).toMatch(/WHATSAPP-BUSINESS instances whose instance key is their Meta access token[^\n]*cloud-/);
        expect(lines.find((l) => l.startsWith('Summary:'))).toBe(
          `Summary: 5 imported, 0 skipped, 4 failed (from ${lines[0].replace(/^Importing 9 instances from /, '')})`,
        );
        const proxiedLine = lines.find((l) => l.startsWith('Instances going out through a proxy:'));
        expect(proxiedLine).toMatch(/not contacted by the import/);
        expect(proxiedLine).toContain(fx.folder.name);
        expect(proxiedLine).toContain(fx.redis.name);
        expect(proxiedLine).not.toContain(fx.channel.name);
        // Nothing of a failed instance is left behind.
        const names = (await store.db.selectFrom('instances').select('name').execute()).map((r) => r.name);
        expect(names).not.toContain(fx.brokenCreds);
        expect(names).not.toContain(fx.missingKeys);
        expect(names).not.toContain(fx.badProxy);
      });

      it('after a restart every instance is listed with its settings and destinations', async () => {
        const t = await appOnStore(store, keys);
        try {
          const list = await t.api('GET', 'instance/fetchInstances');
          expect(list.status).toBe(200);
          const byName = new Map<string, Json>(list.body.map((entry: Json) => [entry.instance.instanceName, entry.instance]));
          expect([...byName.keys()].sort()).toEqual([fx.folder.name, fx.redis.name, fx.cloud.name, fx.channel.name, fx.unlinked.name].sort());
          expect(byName.get(fx.folder.name)).toMatchObject({ instanceId: fx.folder.id, integration: { integration: 'WHATSAPP-BAILEYS' } });
          // Linked as the same account: shown as its owner once it connects.
          expect(t.services.registry.byInstanceName(fx.folder.name)).toMatchObject({ ownerJid: '5511999990001@s.whatsapp.net', profileName: 'Shop One' });
          expect(byName.get(fx.cloud.name)).toMatchObject({ integration: { integration: 'WHATSAPP-BUSINESS' } });
          // Cloud API: the Meta token is its provider token (and, as Evolution made it, its key), with its ids.
          const cloud = t.services.registry.byInstanceName(fx.cloud.name)!;
          expect(cloud).toMatchObject({ number: fx.cloud.number, businessId: fx.cloud.businessId });
          expect(await t.services.registry.providerTokenOf(cloud)).toBe(fx.cloud.token);
          expect(t.services.registry.apikeyOf(cloud)).toBe(fx.cloud.token);
          expect(t.services.registry.byInstanceName(fx.channel.name)).toMatchObject({ integration: 'EVOLUTION', number: 'route-42' });

          const settings = await t.api('GET', `settings/find/${fx.folder.name}`);
          expect(settings.status).toBe(200);
          expect(settings.body).toMatchObject({
            rejectCall: true,
            msgCall: 'We call you back',
            groupsIgnore: true,
            alwaysOnline: false,
            readMessages: true,
            readStatus: false,
            syncFullHistory: true,
          });
          const webhook = await t.api('GET', `webhook/find/${fx.folder.name}`);
          expect(webhook.status).toBe(200);
          expect(webhook.body).toMatchObject({
            enabled: true,
            url: 'http://127.0.0.1:9/evolution-hook',
            webhookByEvents: true,
            webhookBase64: true,
            events: ['MESSAGES_UPSERT', 'CONNECTION_UPDATE'],
          });
          // Header values are not shown back (they may be secrets); they are stored as Evolution had them.
          expect(t.services.sinks.get(fx.folder.id, 'webhook')?.options.headers).toEqual({ authorization: 'Bearer tenant-7', 'X-Tenant': 'acme' });
          expect((await t.api('GET', `websocket/find/${fx.folder.name}`)).body).toMatchObject({ enabled: true, events: ['MESSAGES_UPSERT'] });
          expect((await t.api('GET', `rabbitmq/find/${fx.folder.name}`)).body).toMatchObject({ enabled: true, events: ['SEND_MESSAGE'] });
          expect((await t.api('GET', `nats/find/${fx.folder.name}`)).body).toMatchObject({ enabled: false });
        } finally {
          await t.close();
        }
      });

      it('each proxy is answered by proxy/find with its password masked, and the stored password opens to the original', async () => {
        const t = await appOnStore(store, keys);
        try {
          const folder = await t.api('GET', `proxy/find/${fx.folder.name}`);
          expect(folder.status).toBe(200);
          expect(folder.body).toMatchObject({
            enabled: true,
            host: '10.1.2.3',
            port: '3128',
            protocol: 'http',
            username: 'proxy-user',
            password: '********',
            instanceId: fx.folder.id,
          });
          const socks = await t.api('GET', `proxy/find/${fx.redis.name}`);
          expect(socks.body).toMatchObject({
            enabled: true,
            host: 'socks.example.net',
            port: '1080',
            protocol: 'socks5',
            username: 'sock-user',
            password: '********',
          });
          const off = await t.api('GET', `proxy/find/${fx.channel.name}`);
          expect(off.status).toBe(200);
          expect(off.body).toMatchObject({ enabled: false, host: '', port: '', password: '' });
          // Evolution had no proxy for it: none here either.
          const none = await t.api('GET', `proxy/find/${fx.unlinked.name}`);
          expect(none.status).toBe(200);
          expect(none.body).toBeNull();

          const proxies = proxyStoreOf(t.services);
          expect(await proxies.inEffect(fx.folder.id)).toEqual({
            protocol: 'http',
            host: '10.1.2.3',
            port: 3128,
            username: 'proxy-user',
            password: 'proxy-secret',
          });
          expect(await proxies.inEffect(fx.redis.id)).toEqual({
            protocol: 'socks5',
            host: 'socks.example.net',
            port: 1080,
            username: 'sock-user',
            password: 'sock-secret',
          });
          // Sealed at rest: the clear password is nowhere in the row.
          const rows = await store.db.selectFrom('instance_proxies').selectAll().execute();
          expect(rows).toHaveLength(3);
          for (const row of rows) expect(JSON.stringify(row)).not.toMatch(/proxy-secret|sock-secret/);
        } finally {
          await t.close();
        }
      });

      it("each old token opens its own instance's routes and no other's", async () => {
        const t = await appOnStore(store, keys);
        try {
          for (const [name, token] of [
            [fx.folder.name, fx.folder.token],
            [fx.redis.name, fx.redis.token],
            [fx.channel.name, fx.channel.token],
            [fx.cloud.name, fx.cloud.token],
          ]) {
            const own = await t.api('GET', 'instance/fetchInstances', { key: token });
            expect(own.status, name).toBe(200);
            expect(own.body.map((e: Json) => e.instance.instanceName)).toEqual([name]);
            expect((await t.api('GET', `settings/find/${name}`, { key: token })).status).toBe(200);
            const other = name === fx.unlinked.name ? fx.folder.name : fx.unlinked.name;
            expect((await t.api('GET', `settings/find/${other}`, { key: token })).status).toBe(403);
          }
          expect((await t.api('GET', 'instance/fetchInstances', { key: 'not-a-key-of-anyone-here' })).status).toBe(401);
        } finally {
          await t.close();
        }
      });

      it('the WhatsApp Web connector loads the credentials and every signal key Evolution had, from its folder and from Redis', async () => {
        const services = await loadedServices(store, keys);
        for (const linked of [fx.folder, fx.redis]) {
          const auth = await loadStoreAuth(services.connectorHost, linked.id, silentLogger());
          expect(auth.linked()).toBe(true);
          expect(comparable('creds', auth.state.creds)).toBe(comparable('creds', linked.creds));
          for (const [type, values] of Object.entries(linked.keys)) {
            const ids = Object.keys(values);
            const loaded = await auth.state.keys.get(type as never, ids);
            for (const id of ids) expect(comparable(type, loaded[id]), `${type} ${id}`).toBe(comparable(type, values[id]));
          }
          const rows = await store.db.selectFrom('session_keys').select('id').where('instance_id', '=', linked.id).execute();
          expect(rows).toHaveLength(Object.values(linked.keys).reduce((n, values) => n + Object.keys(values).length, 0));
          auth.close();
        }
        // An instance Evolution never linked has no session: it starts with a QR code.
        const unlinked = services.registry.byInstanceName(fx.unlinked.name);
        expect(await services.connectorHost.loadSession(unlinked!.id)).toBeNull();
      });

      it('with --with-history, the find routes answer the messages, chats, contacts and labels Evolution kept', async () => {
        const t = await appOnStore(store, keys);
        try {
          const messages = await t.api('POST', `chat/findMessages/${fx.folder.name}`, { body: {} });
          expect(messages.status).toBe(200);
          expect(messages.body.messages.total).toBe(3);
          const read = messages.body.messages.records.find((r: Json) => r.key.fromMe);
          expect(read).toMatchObject({
            MessageUpdate: [{ status: 'READ' }],
            message: { conversation: 'history 2' },
            messageTimestamp: 1732000002,
            source: 'web',
          });
          const chats = await t.api('POST', `chat/findChats/${fx.folder.name}`, { body: {} });
          expect(chats.body).toHaveLength(1);
          expect(chats.body[0]).toMatchObject({
            remoteJid: '5511988887777@s.whatsapp.net',
            pushName: 'Carla',
            unreadCount: 2,
            lastMessage: { message: { conversation: 'history 3' } },
          });
          const chat = await t.api('GET', `chat/findChatByRemoteJid/${fx.folder.name}?remoteJid=5511988887777@s.whatsapp.net`);
          expect(chat.body).toMatchObject({ name: 'Carla', labels: ['3'], unreadMessages: 2 });
          const labels = await t.api('GET', `label/findLabels/${fx.folder.name}`);
          expect(labels.body).toEqual([
            { id: '3', name: 'VIP', color: '5', predefinedId: null },
            { id: '1', name: 'New customer', color: '0', predefinedId: '1' },
          ]);
          const contacts = await t.api('POST', `chat/findContacts/${fx.folder.name}`, { body: {} });
          expect(contacts.body).toEqual([expect.objectContaining({ remoteJid: '5511988887777@s.whatsapp.net', pushName: 'Carla' })]);
        } finally {
          await t.close();
        }
      });

      it('a second run changes nothing: the imported instances are skipped, each with a line', async () => {
        const before = await snapshot(store);
        const { summary, lines } = await runImport(store, keys, options);
        expect(summary.outcomes.filter((o) => o.result === 'skipped')).toHaveLength(5);
        expect(resultOf(summary, fx.badProxy)?.result).toBe('failed');
        expect(summary.outcomes.filter((o) => o.result === 'imported')).toHaveLength(0);
        expect(lines.some((l) => l.endsWith(`${fx.folder.name}: skipped: already in Switchboard (--replace overwrites it)`))).toBe(true);
        expect(await snapshot(store)).toEqual(before);
      });

      it('Evolution is only read: its rows are as they were', async () => {
        const rows = await evo.query('select count(*) as n from "Instance"');
        expect(Number(rows[0].n)).toBe(9);
        const sessions = await evo.query('select count(*) as n from "Session"');
        expect(Number(sessions[0].n)).toBe(4);
      });

      it('--replace replaces the proxy too: the new one sealed, and none when Evolution has none any more', async () => {
        await evo.query(`update "Proxy" set host = '10.9.9.9', password = 'new-secret' where "instanceId" = '${fx.folder.id}'`);
        await evo.query(`delete from "Proxy" where "instanceId" = '${fx.redis.id}'`);
        const { summary } = await runImport(store, keys, { ...options, withHistory: false, replace: true, only: [fx.folder.name, fx.redis.name] });
        expect(resultOf(summary, fx.folder.name)?.result).toBe('imported');
        expect(resultOf(summary, fx.redis.name)?.result).toBe('imported');
        const t = await appOnStore(store, keys);
        try {
          expect((await t.api('GET', `proxy/find/${fx.folder.name}`)).body).toMatchObject({ enabled: true, host: '10.9.9.9', password: '********' });
          expect((await proxyStoreOf(t.services).inEffect(fx.folder.id))?.password).toBe('new-secret');
          const gone = await t.api('GET', `proxy/find/${fx.redis.name}`);
          expect(gone.status).toBe(200);
          expect(gone.body).toBeNull();
        } finally {
          await t.close();
        }
      });
    });
  }
}
