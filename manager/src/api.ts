// The manager's client of the public API under /messenger: every call sends the key in the `apikey` header, nothing else.

/** An answer in the API's error envelope: the status and the messages a person can act on. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly messages: string[],
  ) {
    super(messages.join('; ') || `request failed (${status})`);
    this.name = 'ApiError';
  }
}

export type ConnectionState = 'open' | 'connecting' | 'close';

export interface InstanceListing {
  instanceName: string;
  instanceId: string;
  status: 'open' | 'close';
  owner?: string;
  profileName?: string;
  profilePictureUrl?: string | null;
  profileStatus?: string;
  apikey?: string;
  integration: { integration: string; token?: string; webhook_wa_business?: string };
}

interface DeliveryCounts {
  pending: number;
  failing: number;
  dead: number;
}

export interface InstanceActivity {
  instanceName: string;
  state: ConnectionState;
  lastActivityAt: string | null;
  queuedSends: number;
  deliveries: DeliveryCounts;
}

export interface Activity {
  instances: InstanceActivity[];
  totals: { queuedSends: number; deliveries: DeliveryCounts; outboxLagSeconds: number };
}

export interface Health {
  status: string;
  store: string;
  version: string;
}

/** One life of a node sharing the store, as `GET /cluster` answers it. */
export interface ClusterNode {
  incarnation: string;
  nodeId: string;
  address: string | null;
  state: 'alive' | 'dead' | 'stopped';
  self: boolean;
  startedAt: string;
  heartbeatAt: string;
  stoppedAt: string | null;
  instances: number;
}

export interface Cluster {
  self: { incarnation: string; nodeId: string };
  deadAfterMs: number;
  nodes: ClusterNode[];
}

export interface QrAnswer {
  pairingCode?: string | null;
  code?: string;
  base64?: string;
  count: number;
  instance?: { instanceName: string; state: string };
}

export interface Settings {
  rejectCall: boolean;
  msgCall: string;
  groupsIgnore: boolean;
  alwaysOnline: boolean;
  readMessages: boolean;
  readStatus: boolean;
  syncFullHistory: boolean;
}

export interface WebhookSettings {
  enabled: boolean;
  url: string;
  events: string[];
  webhookByEvents: boolean;
  webhookBase64: boolean;
  headers: Record<string, string>;
  signed: boolean;
}

export interface SinkSettings {
  enabled: boolean;
  events: string[];
}

export type DeliveryStatus = 'pending' | 'delivered' | 'dead' | 'cancelled';

export interface Delivery {
  id: number;
  eventId: string;
  event: string;
  target: string;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

export interface MessageKey {
  id: string;
  remoteJid: string;
  fromMe: boolean;
}

export interface StoredMessage {
  id: string;
  key: MessageKey;
  pushName: string;
  messageType: string;
  message: Record<string, unknown>;
  messageTimestamp: number | string;
  MessageUpdate: { status: string }[];
}

export interface Chat {
  id: string;
  remoteJid: string;
  pushName: string | null;
  updatedAt: string | null;
  unreadCount: number;
  lastMessage: StoredMessage | null;
}

export interface CreateInput {
  instanceName: string;
  integration: string;
  token?: string;
  number?: string;
  businessId?: string;
  qrcode?: boolean;
}

export interface Created {
  instance: { instanceName: string; instanceId: string; status: string };
  hash: { apikey: string };
  qrcode?: QrAnswer;
}

const seg = (value: string) => encodeURIComponent(value);

/** The API as the manager uses it, for one key. */
export class Api {
  constructor(private readonly key: string) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { apikey: this.key };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(path.startsWith('/') ? path : `/messenger/${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      throw new ApiError(0, ['The service cannot be reached; is it running?']);
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    if (!response.ok) throw new ApiError(response.status, messagesOf(parsed, response.status));
    return parsed as T;
  }

  instances = (name?: string) =>
    this.call<{ instance: InstanceListing }[]>('GET', `instance/fetchInstances${name === undefined ? '' : `?instanceName=${seg(name)}`}`);
  activity = () => this.call<Activity>('GET', 'instance/activity');
  create = (input: CreateInput) => this.call<Created>('POST', 'instance/create', input);
  connect = (name: string, number?: string) => this.call<QrAnswer>('GET', `instance/connect/${seg(name)}${number ? `?number=${seg(number)}` : ''}`);
  connectionState = (name: string) =>
    this.call<{ instance: { instanceName: string; state: ConnectionState; lastActivityAt?: string } }>('GET', `instance/connectionState/${seg(name)}`);
  restart = (name: string) => this.call<QrAnswer>('POST', `instance/restart/${seg(name)}`);
  logout = (name: string) => this.call<unknown>('DELETE', `instance/logout/${seg(name)}`);
  remove = (name: string) => this.call<unknown>('DELETE', `instance/delete/${seg(name)}`);
  settings = (name: string) => this.call<Settings>('GET', `settings/find/${seg(name)}`);
  setSettings = (name: string, settings: Settings) => this.call<unknown>('POST', `settings/set/${seg(name)}`, settings);
  webhook = (name: string) => this.call<WebhookSettings | null>('GET', `webhook/find/${seg(name)}`);
  setWebhook = (name: string, webhook: Record<string, unknown>) => this.call<unknown>('POST', `webhook/set/${seg(name)}`, { webhook });
  sink = (kind: 'websocket' | 'rabbitmq' | 'nats', name: string) => this.call<SinkSettings | null>('GET', `${kind}/find/${seg(name)}`);
  setSink = (kind: 'websocket' | 'rabbitmq' | 'nats', name: string, settings: SinkSettings) =>
    this.call<unknown>('POST', `${kind}/set/${seg(name)}`, { [kind]: settings });
  deliveries = (name: string, status?: DeliveryStatus) =>
    this.call<{ deliveries: Delivery[]; nextCursor: string | null }>('GET', `webhook/deliveries/${seg(name)}?limit=100${status ? `&status=${status}` : ''}`);
  redeliver = (name: string, which: { deliveryId: number } | { status: 'dead' }) =>
    this.call<{ requeued: number }>('POST', `webhook/redeliver/${seg(name)}`, which);
  sendText = (name: string, number: string, text: string) =>
    this.call<{ key: MessageKey; status: string }>('POST', `message/sendText/${seg(name)}`, { number, text });
  sendMedia = (name: string, body: { number: string; mediatype: string; media: string; fileName: string; caption: string; mimetype: string }) =>
    this.call<{ key: MessageKey; status: string }>('POST', `message/sendMedia/${seg(name)}`, body);
  scan = (code: string, number: string, profileName?: string) =>
    this.call<{ instance: { instanceName: string; status: string; owner: string } }>('POST', 'sandbox/scan', {
      code,
      number,
      ...(profileName ? { profileName } : {}),
    });
  inject = (name: string, from: string, text: string, pushName?: string) =>
    this.call<unknown>('POST', `sandbox/inject/${seg(name)}`, { from, text, ...(pushName ? { pushName } : {}) });
  chats = (name: string) => this.call<Chat[]>('POST', `chat/findChats/${seg(name)}`, { take: 100 });
  messages = (name: string, remoteJid: string) =>
    this.call<{ messages: { records: StoredMessage[] } }>('POST', `chat/findMessages/${seg(name)}`, { where: { key: { remoteJid } }, offset: 100 });
  markRead = (name: string, keys: MessageKey[]) =>
    this.call<unknown>('POST', `chat/markMessageAsRead/${seg(name)}`, {
      readMessages: keys.map((k) => ({ remoteJid: k.remoteJid, fromMe: k.fromMe, id: k.id })),
    });
  health = () => this.call<Health>('GET', '/health');
  cluster = () => this.call<Cluster>('GET', 'cluster');
}

function messagesOf(body: unknown, status: number): string[] {
  if (body && typeof body === 'object' && 'response' in body) {
    const message = (body as { response?: { message?: unknown } }).response?.message;
    if (Array.isArray(message)) return message.map(String);
    if (typeof message === 'string') return [message];
  }
  if (status === 401) return ['The key is not valid'];
  return [`The service answered ${status}`];
}

/** Validation messages by the form field they name (the first word of the message, as the API writes them). */
export function messagesByField(error: unknown, fields: readonly string[]): { byField: Record<string, string[]>; general: string[] } {
  const byField: Record<string, string[]> = {};
  const general: string[] = [];
  const messages = error instanceof ApiError ? error.messages : [String(error instanceof Error ? error.message : error)];
  for (const message of messages) {
    const field = fields.find((name) => new RegExp(`(^|[\\s"'(.])${name}([\\s."'\\[:)]|$)`).test(message));
    if (field) byField[field] = [...(byField[field] ?? []), message];
    else general.push(message);
  }
  return { byField, general };
}
