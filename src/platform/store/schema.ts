// Row types of every table, as Kysely sees them (booleans are 0/1 integers, JSON is text, times are epoch ms).
import type { Generated } from 'kysely';

export interface InstancesTable {
  id: string;
  name: string;
  integration: string;
  status: string;
  owner_jid: string | null;
  profile_name: string | null;
  profile_pic_url: string | null;
  profile_status: string | null;
  number: string | null;
  business_id: string | null;
  apikey_hash: string;
  apikey_sealed: string;
  provider_token_sealed: string | null;
  reject_call: number;
  msg_call: string;
  groups_ignore: number;
  always_online: number;
  read_messages: number;
  read_status: number;
  sync_full_history: number;
  privacy: string | null;
  disconnection_reason: string | null;
  disconnected_at: number | null;
  created_at: number;
  updated_at: number;
  /** The instance's own pacing (null: the default); booleans as 0 or 1. */
  pacing_enabled: number | null;
  pacing_max_per_minute: number | null;
  pacing_min_gap_ms: number | null;
  pacing_max_gap_ms: number | null;
  pacing_new_chat_delay_ms: number | null;
}

interface EventSinksTable {
  instance_id: string;
  sink: string;
  enabled: number;
  events: string;
  options: string;
  updated_at: number;
}

export interface MessagesTable {
  id: string;
  instance_id: string;
  key_id: string;
  remote_jid: string;
  /** The chat's other address (@lid or phone) when known; null before migration 0014. */
  remote_jid_alt: string | null;
  from_me: number;
  participant: string | null;
  /** The group sender's other address (@lid or phone) when known. */
  participant_alt: string | null;
  push_name: string | null;
  message_type: string;
  content: string;
  status: string;
  message_timestamp: number;
  source: string;
  idempotency_key: string | null;
  request_hash: string | null;
  created_at: number;
  updated_at: number;
}

interface MessageStatusTable {
  id: Generated<number>;
  message_id: string;
  instance_id: string;
  status: string;
  detail: string | null;
  at: number;
}

export interface SendQueueTable {
  seq: Generated<number>;
  instance_id: string;
  message_id: string;
  chat_jid: string;
  payload: string;
  state: string;
  attempts: number;
  next_attempt_at: number;
  expires_at: number;
  last_error: string | null;
  created_at: number;
}

interface OutboxTable {
  seq: Generated<number>;
  id: string;
  instance_id: string | null;
  instance_name: string;
  event: string;
  body: string;
  created_at: number;
  /** Bits of the brokers the instance's settings wanted the event on when it was written (each broker sink's outbox mark, `events/writer.ts`); null before migration 0008. */
  broker_wants: number | null;
}

export interface DeliveriesTable {
  id: Generated<number>;
  event_id: string;
  outbox_seq: number;
  instance_id: string | null;
  instance_name: string;
  target: string;
  url: string;
  event: string;
  state: string;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  last_status: number | null;
  created_at: number;
  delivered_at: number | null;
  /**
   * The instance webhook's settings as they were when the delivery was queued, kept only for the last events of a
   * deleted instance (its settings are gone with it); null otherwise: a delivery follows the settings as they are.
   */
  settings_snapshot: string | null;
  /** The node incarnation holding the delivery's claim while it is being sent; null otherwise (and before migration 0019). */
  claimed_by: string | null;
}

/** One life of a node: registered at start, heartbeating while it runs, stopped at a clean stop. */
interface NodesTable {
  incarnation: string;
  /** NODE_ID: the node's name across restarts. */
  node_id: string;
  started_at: number;
  heartbeat_at: number;
  stopped_at: number | null;
  /** Where the other nodes reach this one (NODE_ADDRESS); null before migration 0020. */
  address: string | null;
}

/** Which node incarnation runs each instance's live connection; `generation` rises at every change of owner. */
interface InstanceOwnersTable {
  instance_id: string;
  /** The owning incarnation; null while the instance waits for a node to take it. */
  owner: string | null;
  generation: number;
  since: number;
}

/** Which node incarnation runs each singleton job of the fleet (a broker relay, event retention). */
interface JobLeasesTable {
  /** The job's name: `rabbitmq-relay`, `nats-relay`, `event-retention`. */
  job: string;
  /** The holding incarnation; it keeps the job while its heartbeat is recent. */
  holder: string;
  /** When the holder took the job (epoch ms). */
  since: number;
}

interface SessionsTable {
  instance_id: string;
  data: string;
  updated_at: number;
}

interface SandboxCodesTable {
  code: string;
  instance_id: string;
  expires_at: number;
  created_at: number;
}

/** A sandbox instance live (connector open) on a node: who it is on the network, and which incarnation has it. */
interface SandboxLiveTable {
  instance_id: string;
  incarnation: string;
  owner_jid: string;
  profile_name: string;
  since: number;
}

/** A letter for a sandbox instance live on another node; `payload` is JSON (see connectors/sandbox/mailbox.ts). */
interface SandboxMailTable {
  id: Generated<number>;
  instance_id: string;
  kind: string;
  payload: string;
  created_at: number;
}

/** A sandbox media file or profile picture kept in the store (nodes sharing it); `name` is `<folder>/<file name>`. */
interface SandboxFilesTable {
  name: string;
  data: Buffer;
  created_at: number;
}

interface SessionKeysTable {
  instance_id: string;
  type: string;
  id: string;
  value: string;
  updated_at: number;
}

interface MediaBlobsTable {
  id: string;
  instance_id: string;
  data: Buffer;
  created_at: number;
}

interface SandboxBlocksTable {
  instance_id: string;
  /** The blocked account's address. */
  jid: string;
  created_at: number;
}

/** A group of the sandbox network; times in seconds. */
interface SandboxGroupsTable {
  jid: string;
  subject: string;
  subject_owner: string;
  subject_time: number;
  description: string | null;
  desc_id: string | null;
  desc_owner: string | null;
  desc_time: number | null;
  /** The group's picture in the sandbox picture store. */
  picture_file: string | null;
  owner_jid: string;
  creation: number;
  /** Only admins send. */
  announce: number;
  /** Only admins edit the group's info. */
  locked: number;
  /** The disappearing-messages timer, seconds (0: off). */
  ephemeral: number;
  invite_code: string;
  updated_at: number;
}

/** A member of a sandbox group, by phone address. */
interface SandboxGroupMembersTable {
  group_jid: string;
  jid: string;
  role: 'superadmin' | 'admin' | 'member';
  added_at: number;
}

interface BrokerCursorsTable {
  sink: string;
  last_seq: number;
  updated_at: number;
}

/** A chat of an instance: kept up as messages are stored (`history/`), archived and marked unread through the API. */
export interface ChatsTable {
  id: string;
  instance_id: string;
  remote_jid: string;
  name: string | null;
  /** Received messages since the chat was last marked read. */
  unread_messages: number;
  archived: number;
  marked_unread: number;
  /** Label ids (JSON array); kept for the labels routes. */
  labels: string;
  /** The newest stored message's `message_timestamp` (seconds); null for a chat without one. */
  last_message_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A contact of an instance: a person it exchanged messages with, named by their push name. */
interface ContactsTable {
  id: string;
  instance_id: string;
  remote_jid: string;
  push_name: string | null;
  profile_pic_url: string | null;
  created_at: number;
  updated_at: number;
}

/** A label of an instance's account, as its messenger reported it (`label/findLabels`); `sandbox_labels` alike. */
interface LabelsTable {
  instance_id: string;
  /** The messenger's id of the label. */
  label_id: string;
  name: string;
  /** WhatsApp's palette index. */
  color: number;
  predefined_id: string | null;
  created_at: number;
  updated_at: number;
}

/** A Cloud API message template created through the API: Meta's id and answer, and where status changes go. */
interface TemplatesTable {
  id: string;
  instance_id: string;
  template_id: string;
  name: string;
  /** Meta's answer to the creation (`{id, status, category}`), JSON. */
  template: string;
  webhook_url: string | null;
  created_at: number;
  updated_at: number;
}

/** An instance's outbound proxy; a disabled one keeps no host or credentials. */
export interface InstanceProxiesTable {
  instance_id: string;
  enabled: number;
  protocol: string;
  host: string;
  port: number;
  username: string | null;
  password_sealed: string | null;
  created_at: number;
  updated_at: number;
}

export interface Database {
  instances: InstancesTable;
  event_sinks: EventSinksTable;
  messages: MessagesTable;
  message_status: MessageStatusTable;
  send_queue: SendQueueTable;
  outbox: OutboxTable;
  deliveries: DeliveriesTable;
  nodes: NodesTable;
  instance_owners: InstanceOwnersTable;
  job_leases: JobLeasesTable;
  sessions: SessionsTable;
  sandbox_codes: SandboxCodesTable;
  sandbox_live: SandboxLiveTable;
  sandbox_mail: SandboxMailTable;
  sandbox_files: SandboxFilesTable;
  session_keys: SessionKeysTable;
  media_blobs: MediaBlobsTable;
  broker_cursors: BrokerCursorsTable;
  chats: ChatsTable;
  contacts: ContactsTable;
  sandbox_blocks: SandboxBlocksTable;
  sandbox_groups: SandboxGroupsTable;
  sandbox_group_members: SandboxGroupMembersTable;
  labels: LabelsTable;
  sandbox_labels: LabelsTable;
  templates: TemplatesTable;
  instance_proxies: InstanceProxiesTable;
}
