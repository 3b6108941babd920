// An Evolution 2.x deployment built for tests: its database on PostgreSQL or MariaDB (tables written from Evolution's
// Prisma schema), its instances folder and its Redis cache, filled with real Baileys credentials and signal keys
// written the way Evolution writes them.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BufferJSON, Curve, generateOrGetPreKeys, initAuthCreds, proto, type AuthenticationCreds } from 'baileys';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { pgUrl } from './postgres.js';
import { problemOf, serviceAvailable } from './required-services.js';

const MARIADB_URL = process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/mysql';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/** Whether MariaDB (or MySQL) answers; when not, a loud skip of `skipped` (a failure under REQUIRE_SERVICES=1). */
export async function mariadbAvailable(skipped: string): Promise<boolean> {
  const problem = await problemOf(async () => (await mysql.createConnection({ uri: MARIADB_URL, connectTimeout: 2000 })).end());
  return serviceAvailable('MariaDB', MARIADB_URL.replace(/\/\/[^@]*@/, '//'), problem, skipped);
}

/** Whether Redis answers; when not, a loud skip of `skipped` (a failure under REQUIRE_SERVICES=1). */
export async function redisAvailable(skipped: string): Promise<boolean> {
  const problem = await problemOf(async () => {
    const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
    } finally {
      client.disconnect();
    }
  });
  return serviceAvailable('Redis', REDIS_URL, problem, skipped);
}

// ---------------------------------------------------------------------------------------------------------------
// Evolution's tables (the ones the import reads, and a few it only lists), from prisma/*-schema.prisma.

type Column = [
  name: string,
  type: 'id' | 'ref' | 'text' | 'longtext' | `varchar(${number})` | 'bool' | 'int' | 'json' | 'timestamp' | `enum:${string}`,
  extra?: string,
];

const enums: Record<string, string[]> = {
  InstanceConnectionStatus: ['open', 'close', 'connecting'],
  DeviceMessage: ['ios', 'android', 'web', 'unknown', 'desktop'],
};

const perInstance = (extra: Column[]): Column[] => [
  ['id', 'id'],
  ...extra,
  ['createdAt', 'timestamp'],
  ['updatedAt', 'timestamp'],
  ['instanceId', 'ref', 'unique'],
];
const switchColumns: Column[] = [
  ['enabled', 'bool', 'not null default false'],
  ['events', 'json', 'not null'],
];

const tables: Record<string, Column[]> = {
  Instance: [
    ['id', 'id'],
    ['name', 'varchar(255)', 'not null unique'],
    ['connectionStatus', 'enum:InstanceConnectionStatus', "not null default 'open'"],
    ['ownerJid', 'varchar(100)'],
    ['profileName', 'varchar(100)'],
    ['profilePicUrl', 'varchar(500)'],
    ['integration', 'varchar(100)'],
    ['number', 'varchar(100)'],
    ['businessId', 'varchar(100)'],
    ['token', 'varchar(255)'],
    ['clientName', 'varchar(100)'],
    ['disconnectionReasonCode', 'int'],
    ['disconnectionObject', 'json'],
    ['disconnectionAt', 'timestamp'],
    ['createdAt', 'timestamp'],
    ['updatedAt', 'timestamp'],
  ],
  Session: [
    ['id', 'id'],
    ['sessionId', 'ref', 'unique'],
    ['creds', 'longtext'],
    ['createdAt', 'timestamp'],
  ],
  Setting: perInstance([
    ['rejectCall', 'bool', 'not null default false'],
    ['msgCall', 'varchar(100)'],
    ['groupsIgnore', 'bool', 'not null default false'],
    ['alwaysOnline', 'bool', 'not null default false'],
    ['readMessages', 'bool', 'not null default false'],
    ['readStatus', 'bool', 'not null default false'],
    ['syncFullHistory', 'bool', 'not null default false'],
    ['wavoipToken', 'varchar(100)'],
  ]),
  Webhook: perInstance([
    ['url', 'varchar(500)', 'not null'],
    ['headers', 'json'],
    ['enabled', 'bool', 'default true'],
    ['events', 'json'],
    ['webhookByEvents', 'bool', 'default false'],
    ['webhookBase64', 'bool', 'default false'],
  ]),
  Websocket: perInstance(switchColumns),
  Rabbitmq: perInstance(switchColumns),
  Nats: perInstance(switchColumns),
  Sqs: perInstance(switchColumns),
  Kafka: perInstance(switchColumns),
  Proxy: perInstance([
    ['enabled', 'bool', 'not null default false'],
    ['host', 'varchar(100)', 'not null'],
    ['port', 'varchar(100)', 'not null'],
    ['protocol', 'varchar(100)', 'not null'],
    ['username', 'varchar(100)', 'not null'],
    ['password', 'varchar(100)', 'not null'],
  ]),
  Chatwoot: perInstance([
    ['enabled', 'bool', 'default true'],
    ['accountId', 'varchar(100)'],
    ['token', 'varchar(100)'],
    ['url', 'varchar(500)'],
  ]),
  Typebot: [
    ['id', 'id'],
    ['enabled', 'bool', 'not null default true'],
    ['url', 'varchar(500)', 'not null'],
    ['typebot', 'varchar(100)', 'not null'],
    ['createdAt', 'timestamp'],
    ['updatedAt', 'timestamp'],
    ['instanceId', 'ref'],
  ],
  Chat: [
    ['id', 'id'],
    ['remoteJid', 'varchar(100)', 'not null'],
    ['name', 'varchar(100)'],
    ['labels', 'json'],
    ['createdAt', 'timestamp'],
    ['updatedAt', 'timestamp'],
    ['instanceId', 'ref'],
    ['unreadMessages', 'int', 'not null default 0'],
  ],
  Contact: [
    ['id', 'id'],
    ['remoteJid', 'varchar(100)', 'not null'],
    ['pushName', 'varchar(100)'],
    ['profilePicUrl', 'varchar(500)'],
    ['createdAt', 'timestamp'],
    ['updatedAt', 'timestamp'],
    ['instanceId', 'ref'],
  ],
  Message: [
    ['id', 'id'],
    ['key', 'json', 'not null'],
    ['pushName', 'varchar(100)'],
    ['participant', 'varchar(100)'],
    ['messageType', 'varchar(100)', 'not null'],
    ['message', 'json', 'not null'],
    ['contextInfo', 'json'],
    ['source', 'enum:DeviceMessage', 'not null'],
    ['messageTimestamp', 'int', 'not null'],
    ['instanceId', 'ref'],
    ['webhookUrl', 'varchar(500)'],
    ['status', 'varchar(30)'],
  ],
  Label: [
    ['id', 'id'],
    ['labelId', 'varchar(100)'],
    ['name', 'varchar(100)', 'not null'],
    ['color', 'varchar(100)', 'not null'],
    ['predefinedId', 'varchar(100)'],
    ['createdAt', 'timestamp'],
    ['updatedAt', 'timestamp'],
    ['instanceId', 'ref'],
  ],
};

type Dialect = 'postgres' | 'mysql';

/** Prisma's column types: String is text (PostgreSQL) or varchar(191) (MySQL), Json jsonb or JSON (MariaDB: LONGTEXT). */
function columnType(dialect: Dialect, type: Column[1]): string {
  if (type.startsWith('enum:')) {
    const name = type.slice(5);
    return dialect === 'postgres' ? `"${name}"` : `enum(${enums[name].map((v) => `'${v}'`).join(', ')})`;
  }
  const pgTypes: Record<string, string> = {
    id: 'text',
    ref: 'text',
    text: 'text',
    longtext: 'text',
    bool: 'boolean',
    int: 'integer',
    json: 'jsonb',
    timestamp: 'timestamp',
  };
  const myTypes: Record<string, string> = {
    id: 'varchar(191)',
    ref: 'varchar(191)',
    text: 'varchar(191)',
    longtext: 'text',
    bool: 'boolean',
    int: 'int',
    json: 'json',
    timestamp: 'timestamp null',
  };
  return (dialect === 'postgres' ? pgTypes : myTypes)[type] ?? type;
}

function ddl(dialect: Dialect): string[] {
  const q = (name: string) => (dialect === 'postgres' ? `"${name}"` : `\`${name}\``);
  const statements: string[] = [];
  if (dialect === 'postgres') {
    for (const [name, values] of Object.entries(enums)) statements.push(`create type "${name}" as enum (${values.map((v) => `'${v}'`).join(', ')})`);
  }
  for (const [table, columns] of Object.entries(tables)) {
    const defs = columns.map(([name, type, extra]) => {
      const parts = [q(name), columnType(dialect, type)];
      if (type === 'id') parts.push('primary key');
      if (type === 'ref') parts.push('not null');
      if (extra) parts.push(extra);
      if (type === 'ref') parts.push(`references ${q('Instance')} (${q('id')}) on delete cascade`);
      return parts.join(' ');
    });
    statements.push(`create table ${q(table)} (${defs.join(', ')})`);
  }
  return statements;
}

// ---------------------------------------------------------------------------------------------------------------
// A deployment: its database, instances folder and Redis.

export interface EvolutionDeployment {
  dialect: Dialect;
  /** Evolution's DATABASE_CONNECTION_URI (what --from takes). */
  uri: string;
  /** Evolution's instances folder. */
  instancesDir: string;
  /** The Redis key prefix this deployment's cache uses (CACHE_REDIS_PREFIX_KEY). */
  redisPrefix: string;
  insert(table: string, row: Record<string, unknown>): Promise<void>;
  /** Runs one statement (for assertions that nothing changed). */
  query(sql: string): Promise<Record<string, unknown>[]>;
  redis: Redis;
  dispose(): Promise<void>;
}

/** JSON values of a row as the driver wants them (pg takes objects for jsonb only when stringified for arrays). */
function bindable(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date || typeof value !== 'object') return value;
  return JSON.stringify(value);
}

async function redisClient(): Promise<Redis> {
  const client = new Redis(REDIS_URL, { lazyConnect: true });
  await client.connect();
  return client;
}

export async function evolutionOnPostgres(): Promise<EvolutionDeployment> {
  const schema = `evo_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.query(`set search_path to ${schema}`);
  for (const statement of ddl('postgres')) await client.query(statement);
  const url = new URL(pgUrl);
  url.protocol = 'postgresql:';
  url.searchParams.set('schema', schema);
  return deployment('postgres', url.toString(), {
    async insert(table, row) {
      const names = Object.keys(row);
      await client.query(
        `insert into "${table}" (${names.map((n) => `"${n}"`).join(', ')}) values (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
        names.map((n) => bindable(row[n])),
      );
    },
    async query(sql) {
      return (await client.query(sql)).rows as Record<string, unknown>[];
    },
    async close() {
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    },
  });
}

export async function evolutionOnMariadb(): Promise<EvolutionDeployment> {
  const database = `evo_${randomBytes(6).toString('hex')}`;
  const admin = await mysql.createConnection({ uri: MARIADB_URL });
  await admin.query(`create database ${database}`);
  await admin.end();
  const url = new URL(MARIADB_URL);
  url.pathname = `/${database}`;
  const connection = await mysql.createConnection({ uri: url.toString(), timezone: 'Z' });
  for (const statement of ddl('mysql')) await connection.query(statement);
  return deployment('mysql', url.toString(), {
    async insert(table, row) {
      const names = Object.keys(row);
      await connection.query(
        `insert into \`${table}\` (${names.map((n) => `\`${n}\``).join(', ')}) values (${names.map(() => '?').join(', ')})`,
        names.map((n) => bindable(row[n])),
      );
    },
    async query(sql) {
      const [rows] = await connection.query(sql.replace(/"/g, '`'));
      return rows as Record<string, unknown>[];
    },
    async close() {
      await connection.query(`drop database if exists ${database}`);
      await connection.end();
    },
  });
}

async function deployment(
  dialect: Dialect,
  uri: string,
  db: { insert: EvolutionDeployment['insert']; query: EvolutionDeployment['query']; close(): Promise<void> },
): Promise<EvolutionDeployment> {
  const instancesDir = mkdtempSync(join(tmpdir(), 'evo-instances-'));
  const redis = await redisClient();
  const redisPrefix = `evo-test-${randomBytes(4).toString('hex')}`;
  return {
    dialect,
    uri,
    instancesDir,
    redisPrefix,
    insert: db.insert,
    query: db.query,
    redis,
    async dispose() {
      const keys = await redis.keys(`${redisPrefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await db.close();
      rmSync(instancesDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Baileys credentials and signal keys, real ones, and how Evolution writes them.

/** A linked device's credentials: Baileys' own initAuthCreds, then what pairing adds (me, account). */
export function linkedCreds(phone: string): AuthenticationCreds {
  const creds = initAuthCreds();
  creds.me = { id: `${phone}:12@s.whatsapp.net`, lid: `${phone.slice(-8)}77001:12@lid`, name: `Shop ${phone.slice(-4)}` };
  creds.account = { details: randomBytes(64), accountSignatureKey: randomBytes(32), accountSignature: randomBytes(64), deviceSignature: randomBytes(64) };
  creds.platform = 'android';
  creds.registered = true;
  return creds;
}

export type KeySet = Record<string, Record<string, unknown>>;

/** Every kind of signal key a linked device keeps, with ids of every shape (pre-keys made by Baileys itself). */
export function signalKeys(creds: AuthenticationCreds, preKeys = 30): KeySet {
  const { newPreKeys } = generateOrGetPreKeys(creds, preKeys);
  const syncKeyId = Buffer.from([0, 0, 0, 1, 0xfc, 0xff, 0xfe, 0x3f]).toString('base64'); // holds "/" and "+"
  return {
    'pre-key': Object.fromEntries(Object.entries(newPreKeys).map(([id, pair]) => [id, pair])),
    session: { '5511988887777.0': randomBytes(180), '123456789012345_1.3': randomBytes(180) },
    'identity-key': { '5511988887777.0': Curve.generateKeyPair().public },
    'sender-key': {
      '120363012345678901@g.us::5511988887777::0': randomBytes(90),
      '5511988887777-1600000000@g.us::123456789012345_1::2': randomBytes(90),
    },
    'sender-key-memory': { '120363012345678901@g.us': { '5511988887777:0@s.whatsapp.net': true } },
    'app-state-sync-key': {
      [syncKeyId]: proto.Message.AppStateSyncKeyData.fromObject({
        keyData: randomBytes(32),
        fingerprint: { rawId: 7, currentIndex: 2, deviceIndexes: [0, 12] },
        timestamp: 1_732_000_000,
      }),
    },
    'app-state-sync-version': {
      regular_high: { version: 4, hash: randomBytes(128), indexValueMap: { [randomBytes(8).toString('base64')]: { valueMac: randomBytes(32) } } },
    },
    'lid-mapping': { '5511988887777': '123456789012345', '123456789012345_reverse': '5511988887777' },
    'device-list': { '5511988887777': ['0', '12'] },
    tctoken: { '123456789012345@lid': { token: randomBytes(20), timestamp: '1732000000' } },
  };
}

/** How Evolution's files name a key: "/" as "__" and ":" as "-" (its fixFileName). */
export function fileNameOf(type: string, id: string): string {
  return `${type}-${id}`.replace(/\//g, '__').replace(/:/g, '-');
}

/** `Session.creds` as Evolution writes it: the BufferJSON text, stringified once more. */
export function sessionCredsText(creds: AuthenticationCreds): string {
  return JSON.stringify(JSON.stringify(creds, BufferJSON.replacer));
}

/** Writes the keys as Evolution's files do: `<folder>/<instance id>/<type>-<id>.json`, BufferJSON text. */
export function writeKeysFolder(instancesDir: string, instanceId: string, keys: KeySet): void {
  const folder = join(instancesDir, instanceId);
  mkdirSync(folder, { recursive: true });
  for (const [type, values] of Object.entries(keys)) {
    for (const [id, value] of Object.entries(values)) writeFileSync(join(folder, `${fileNameOf(type, id)}.json`), JSON.stringify(value, BufferJSON.replacer));
  }
}

/** Writes the keys (and the creds, with CACHE_REDIS_SAVE_INSTANCES) as Evolution's Redis cache does: one hash, values stringified twice. */
export async function writeKeysRedis(deployment: EvolutionDeployment, instanceId: string, keys: KeySet, creds?: AuthenticationCreds): Promise<void> {
  const hash = `${deployment.redisPrefix}:instance:${instanceId}`;
  const twice = (value: unknown) => JSON.stringify(JSON.stringify(value, BufferJSON.replacer), BufferJSON.replacer);
  const fields: Record<string, string> = {};
  for (const [type, values] of Object.entries(keys)) for (const [id, value] of Object.entries(values)) fields[`${type}-${id}`] = twice(value);
  if (creds) fields.creds = twice(creds);
  await deployment.redis.hset(hash, fields);
}

/** A value compared across stores: BufferJSON text (an app-state sync key by its protobuf bytes). */
export function comparable(type: string, value: unknown): string {
  if (type === 'app-state-sync-key' && value) {
    return Buffer.from(
      proto.Message.AppStateSyncKeyData.encode(proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>)).finish(),
    ).toString('base64');
  }
  return JSON.stringify(value, BufferJSON.replacer);
}

/** An instance row of Evolution's `Instance` table with defaults. */
export function instanceRow(name: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: randomUUID(),
    name,
    connectionStatus: 'close',
    integration: 'WHATSAPP-BAILEYS',
    token: randomUUID().toUpperCase(),
    clientName: 'evolution_exchange',
    createdAt: new Date(),
    updatedAt: new Date(),
    ...fields,
  };
}

/** A row id as Prisma makes them (cuid-like; only unique matters). */
export const rowId = () => `c${randomBytes(12).toString('hex')}`;
