// Reads Evolution's tables (names and columns from its Prisma schema) into the import's model, instance by instance.
import type { EvolutionDatabase } from './evolution-database.js';
import type {
  EvolutionChat,
  EvolutionContact,
  EvolutionHistory,
  EvolutionInstance,
  EvolutionInstanceRow,
  EvolutionLabel,
  EvolutionMessage,
  EvolutionProxy,
  EvolutionSettings,
  EvolutionSwitch,
  EvolutionWebhook,
} from './evolution-model.js';
import { ImportProblem } from './problem.js';
import { bool, epochMs, int, json, text } from './sql-values.js';

type Row = Record<string, unknown>;

/** Evolution's per-instance event destinations that Switchboard has no sink for (named for the report). */
const unsupportedSwitches = [
  ['Sqs', 'SQS events'],
  ['Kafka', 'Kafka events'],
  ['Pusher', 'Pusher events'],
] as const;

/** Evolution's chatbot and CRM integrations (tables with one row per bot): none has a meaning in Switchboard. */
const unsupportedBots = [
  ['Typebot', 'Typebot'],
  ['OpenaiBot', 'OpenAI bots'],
  ['Dify', 'Dify bots'],
  ['EvolutionBot', 'Evolution bots'],
  ['Flowise', 'Flowise bots'],
  ['N8n', 'n8n bots'],
  ['Evoai', 'EvoAI bots'],
  ['Template', 'message templates'],
] as const;

function instanceRow(row: Row): EvolutionInstanceRow {
  return {
    id: String(row.id),
    name: String(row.name),
    connectionStatus: text(row.connectionStatus),
    ownerJid: text(row.ownerJid),
    profileName: text(row.profileName),
    profilePicUrl: text(row.profilePicUrl),
    integration: text(row.integration),
    number: text(row.number),
    businessId: text(row.businessId),
    token: text(row.token),
    clientName: text(row.clientName),
  };
}

function settingsRow(row: Row): EvolutionSettings {
  return {
    rejectCall: bool(row.rejectCall),
    msgCall: text(row.msgCall),
    groupsIgnore: bool(row.groupsIgnore),
    alwaysOnline: bool(row.alwaysOnline),
    readMessages: bool(row.readMessages),
    readStatus: bool(row.readStatus),
    syncFullHistory: bool(row.syncFullHistory),
    wavoipToken: text(row.wavoipToken),
  };
}

function webhookRow(row: Row): EvolutionWebhook {
  return {
    url: text(row.url) ?? '',
    enabled: bool(row.enabled, true),
    events: json(row.events),
    headers: json(row.headers),
    byEvents: bool(row.webhookByEvents),
    base64: bool(row.webhookBase64),
  };
}

function switchRow(row: Row): EvolutionSwitch {
  return { enabled: bool(row.enabled), events: json(row.events) };
}

function proxyRow(row: Row): EvolutionProxy {
  return {
    enabled: bool(row.enabled),
    host: text(row.host) ?? '',
    port: text(row.port) ?? '',
    protocol: text(row.protocol) ?? '',
    username: text(row.username) ?? '',
    password: text(row.password) ?? '',
  };
}

export class EvolutionReader {
  private tableNames: Set<string> | undefined;

  constructor(private readonly db: EvolutionDatabase) {}

  /** Every instance (or those named in `only`), ordered by name, with what Evolution keeps of each. */
  async instances(only?: readonly string[]): Promise<EvolutionInstance[]> {
    const tables = await this.tables();
    if (!tables.has('Instance')) {
      throw new ImportProblem(
        `no "Instance" table in ${this.db.address}: is this Evolution 2.x's database? (for PostgreSQL, give the ?schema= of Evolution's DATABASE_CONNECTION_URI)`,
      );
    }
    let rows = (await this.db.select('select * from "Instance" order by "name"')).map(instanceRow);
    if (only) rows = rows.filter((row) => only.includes(row.name));
    const byInstance = async <T>(table: string, map: (row: Row) => T): Promise<Map<string, T>> => {
      const found = new Map<string, T>();
      if (!tables.has(table)) return found;
      for (const row of await this.db.select(`select * from "${table}"`)) found.set(String(row.instanceId), map(row));
      return found;
    };
    const settings = await byInstance('Setting', settingsRow);
    const webhooks = await byInstance('Webhook', webhookRow);
    const websockets = await byInstance('Websocket', switchRow);
    const rabbitmqs = await byInstance('Rabbitmq', switchRow);
    const natss = await byInstance('Nats', switchRow);
    const proxies = await byInstance('Proxy', proxyRow);
    const chatwoots = await byInstance('Chatwoot', (row) => bool(row.enabled, true));
    const sessions = new Map<string, string | null>();
    if (tables.has('Session')) {
      for (const row of await this.db.select('select "sessionId", "creds" from "Session"')) sessions.set(String(row.sessionId), text(row.creds));
    }
    const unsupported = new Map<string, string[]>();
    const note = (instanceId: string, what: string) => unsupported.set(instanceId, [...(unsupported.get(instanceId) ?? []), what]);
    for (const [id, enabled] of chatwoots) if (enabled) note(id, 'Chatwoot');
    for (const [table, label] of unsupportedSwitches) {
      for (const [id, row] of await byInstance(table, switchRow)) if (row.enabled) note(id, label);
    }
    for (const [table, label] of unsupportedBots) {
      if (!tables.has(table)) continue;
      for (const row of await this.db.select(`select "instanceId", count(*) as "n" from "${table}" group by "instanceId"`)) {
        note(String(row.instanceId), `${label} (${int(row.n) ?? 0})`);
      }
    }
    return rows.map((row) => ({
      row,
      settings: settings.get(row.id) ?? null,
      webhook: webhooks.get(row.id) ?? null,
      websocket: websockets.get(row.id) ?? null,
      rabbitmq: rabbitmqs.get(row.id) ?? null,
      nats: natss.get(row.id) ?? null,
      proxy: proxies.get(row.id) ?? null,
      sessionCreds: sessions.get(row.id) ?? null,
      unsupported: unsupported.get(row.id) ?? [],
    }));
  }

  /** The messages, chats, contacts and labels Evolution kept of one instance. */
  async history(instanceId: string): Promise<EvolutionHistory> {
    const tables = await this.tables();
    const rowsOf = async (table: string, columns: string, order: string) =>
      tables.has(table) ? this.db.select(`select ${columns} from "${table}" where "instanceId" = ? order by ${order}`, [instanceId]) : [];
    const messages = (
      await rowsOf('Message', '"key", "pushName", "participant", "messageType", "message", "source", "messageTimestamp", "status"', '"messageTimestamp", "id"')
    ).map(
      (row): EvolutionMessage => ({
        key: json(row.key),
        pushName: text(row.pushName),
        participant: text(row.participant),
        messageType: text(row.messageType) ?? 'unknown',
        message: json(row.message),
        source: text(row.source),
        messageTimestamp: int(row.messageTimestamp) ?? 0,
        status: text(row.status),
      }),
    );
    const chats = (await rowsOf('Chat', '*', '"id"')).map(
      (row): EvolutionChat => ({
        remoteJid: String(row.remoteJid),
        name: text(row.name),
        labels: json(row.labels),
        unreadMessages: int(row.unreadMessages) ?? 0,
        updatedAt: epochMs(row.updatedAt),
      }),
    );
    const contacts = (await rowsOf('Contact', '"remoteJid", "pushName", "profilePicUrl"', '"id"')).map(
      (row): EvolutionContact => ({ remoteJid: String(row.remoteJid), pushName: text(row.pushName), profilePicUrl: text(row.profilePicUrl) }),
    );
    const labels = (await rowsOf('Label', '*', '"createdAt", "id"')).map(
      (row): EvolutionLabel => ({ labelId: text(row.labelId), name: text(row.name) ?? '', color: text(row.color) ?? '', predefinedId: text(row.predefinedId) }),
    );
    return { messages, chats, contacts, labels };
  }

  private async tables(): Promise<Set<string>> {
    this.tableNames ??= await this.db.tables();
    return this.tableNames;
  }
}
