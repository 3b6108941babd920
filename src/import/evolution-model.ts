// What the import reads of an Evolution 2.x deployment: one instance with its settings and destinations, and its history.

/** A row of Evolution's `Instance` table (the columns the import uses). */
export interface EvolutionInstanceRow {
  id: string;
  name: string;
  connectionStatus: string | null;
  ownerJid: string | null;
  profileName: string | null;
  profilePicUrl: string | null;
  /** `WHATSAPP-BAILEYS`, `WHATSAPP-BUSINESS` or `EVOLUTION` (null on rows older than the column's default). */
  integration: string | null;
  number: string | null;
  businessId: string | null;
  /** The instance's API key; for WHATSAPP-BUSINESS also the Meta access token. */
  token: string | null;
  clientName: string | null;
}

/** A row of `Setting`. */
export interface EvolutionSettings {
  rejectCall: boolean;
  msgCall: string | null;
  groupsIgnore: boolean;
  alwaysOnline: boolean;
  readMessages: boolean;
  readStatus: boolean;
  syncFullHistory: boolean;
  wavoipToken: string | null;
}

/** A row of `Webhook`. */
export interface EvolutionWebhook {
  url: string;
  enabled: boolean;
  /** Event names as stored (a JSON array of strings, or anything else an old row holds). */
  events: unknown;
  headers: unknown;
  byEvents: boolean;
  base64: boolean;
}

/** A row of `Websocket`, `Rabbitmq`, `Nats`, `Sqs`, `Kafka` or `Pusher`: a switch and its events. */
export interface EvolutionSwitch {
  enabled: boolean;
  events: unknown;
}

/** A row of `Proxy`. */
export interface EvolutionProxy {
  enabled: boolean;
  host: string;
  port: string;
  protocol: string;
  username: string;
  password: string;
}

/** One Evolution instance and everything kept with it (except its signal keys, which live in files or Redis). */
export interface EvolutionInstance {
  row: EvolutionInstanceRow;
  settings: EvolutionSettings | null;
  webhook: EvolutionWebhook | null;
  websocket: EvolutionSwitch | null;
  rabbitmq: EvolutionSwitch | null;
  nats: EvolutionSwitch | null;
  proxy: EvolutionProxy | null;
  /** `Session.creds` as stored (a JSON string whose content is the JSON text of the Baileys credentials), or null. */
  sessionCreds: string | null;
  /**
   * Evolution features this instance uses that have no meaning in Switchboard, each named for the report
   * (`Chatwoot`, `Typebot (2 bots)`, `SQS events`…).
   */
  unsupported: string[];
}

/** A row of `Message`. */
export interface EvolutionMessage {
  key: unknown;
  pushName: string | null;
  participant: string | null;
  messageType: string;
  message: unknown;
  source: string | null;
  messageTimestamp: number;
  status: string | null;
}

/** A row of `Chat`. */
export interface EvolutionChat {
  remoteJid: string;
  name: string | null;
  labels: unknown;
  unreadMessages: number;
  updatedAt: number | null;
}

/** A row of `Contact`. */
export interface EvolutionContact {
  remoteJid: string;
  pushName: string | null;
  profilePicUrl: string | null;
}

/** A row of `Label`. */
export interface EvolutionLabel {
  labelId: string | null;
  name: string;
  /** WhatsApp's palette index, as text. */
  color: string;
  predefinedId: string | null;
}

export interface EvolutionHistory {
  messages: EvolutionMessage[];
  chats: EvolutionChat[];
  contacts: EvolutionContact[];
  labels: EvolutionLabel[];
}
