// One integration kind as the service registers it: its name, creation rules, factory, own routes and capabilities.
import type { FastifyPluginAsync } from 'fastify';
import type { Connector, ConnectorHost } from './connector.js';
import type { Instance } from './instance.js';

/** The send operations of the API; a kind's messaging module says which of them it takes. */
const messageOperations = ['text', 'media', 'list', 'poll', 'sticker', 'status', 'location', 'contact', 'reaction', 'buttons', 'voiceNote', 'ptv'] as const;
export type MessageOperation = (typeof messageOperations)[number];

/** Every operation the API may refuse with "Method not available on …", by capability module. */
export type Operation =
  | MessageOperation
  | 'presence'
  | 'privacy'
  | 'whatsappNumbers'
  | 'profile'
  | ChangeOperation
  | 'blocking'
  | 'mediaDownload'
  | 'chats'
  | 'groups'
  | 'labels'
  | 'templates';

/** Changing a sent message: deleting it for everyone, editing its text. */
type ChangeOperation = 'revoke' | 'edit';

/** What a kind's connectors can do: the capability modules they implement. */
export interface KindCapabilities {
  messaging: {
    operations: readonly MessageOperation[];
    /** How a list goes out: a real interactive list, or a single-choice poll (which every phone shows). */
    lists: 'interactive' | 'poll';
  };
  presence: boolean;
  privacy: boolean;
  /** Looking numbers up on the messenger (`whatsappNumbers`); absent: it cannot. */
  contacts?: boolean;
  /** Reading profiles and changing the own one (absent: no). */
  profile?: boolean;
  /** Changing chats on the account: archive, mark unread (absent: no). */
  chats?: boolean;
  /** Deleting sent messages for everyone and editing them (the messaging module's `revoke`, `edit`); absent: neither. */
  changes?: readonly ChangeOperation[];
  /** Blocking and unblocking accounts (absent: no). */
  blocking?: boolean;
  /** Downloading the bytes of media messages (absent: no). */
  mediaDownload?: boolean;
  /** Groups: creating, administering, joining and leaving them (absent: no). */
  groups?: boolean;
  /** Labelling chats (`label/findLabels`, `label/handleLabel`; absent: no). */
  labels?: boolean;
  /** Meta message templates: creating, listing and sending them (`template/*`, `sendTemplate`; absent: no). */
  templates?: boolean;
}

/**
 * What a WhatsApp Web link can do (lists go out as single-choice polls, which phones on such links show reliably): the
 * WhatsApp Web connector has it, and the sandbox, which stands in for it.
 */
export const whatsAppWebCapabilities: KindCapabilities = {
  messaging: { operations: messageOperations, lists: 'poll' },
  presence: true,
  privacy: true,
  contacts: true,
  profile: true,
  changes: ['revoke', 'edit'],
  blocking: true,
  mediaDownload: true,
  chats: true,
  groups: true,
  labels: true,
};

/** The creation fields a kind may take, as the create request gives them. */
export interface CreationInput {
  token?: string;
  number?: string;
  businessId?: string;
}

/** What a kind keeps of the creation fields, checked and normalised. */
export interface CreationFields {
  /** Stored as the instance's number (a pairing number, a phone-number id, a routing id…). */
  number: string | null;
  /** A provider credential kept sealed (the Meta access token); null when the kind takes none. */
  providerToken: string | null;
  /** Whether `token` is the instance API key to use (false when the kind takes it as its provider credential). */
  tokenIsApiKey: boolean;
}

export interface ConnectorKind {
  /** The `integration` value of the API (`SANDBOX`, `WHATSAPP-BAILEYS`…). */
  name: string;
  /** The name people read: "Method not available on <label>". */
  label: string;
  capabilities: KindCapabilities;
  /** Connected at creation and at every start, with or without a session (there is no linking flow). */
  alwaysOn: boolean;
  /**
   * Opening makes no connection to WhatsApp's servers (the sandbox, the Cloud API): a node opens many of these at once
   * (their stored changes go in shared transactions), not `INSTANCE_START_CONCURRENCY` at a time.
   */
  quickToOpen?: boolean;
  /** Checks and normalises the creation fields; throws a coded error naming the field to fix. */
  creationFields(input: CreationInput): CreationFields;
  /**
   * Present when the kind links a new instance itself (the sandbox with SANDBOX_AUTO_LINK) instead of connecting it:
   * `check` refuses, before anything exists, what `link` could not link; a throw of `link` removes the instance again.
   */
  linkAtCreation?: {
    check(input: CreationInput): void;
    link(instance: Instance, input: CreationInput): Promise<void>;
  };
  /**
   * Extra fields of the create answer's `instance` object (beside instanceName, instanceId, integration, status, and
   * Evolution's `webhook_wa_business: null` and `access_token_wa_business: ""` they may replace).
   */
  creationAnswer?(instance: Instance): Record<string, unknown>;
  /** Extra fields of the `integration` object of an instance in listings (beside `integration`). */
  listingAnswer?(instance: Instance): Record<string, unknown>;
  /**
   * Present when connect takes a phone number (WhatsApp Web's pairing code): checks it and answers the number to
   * store; a different number given to connect replaces the stored one. Absent: connect ignores `number`.
   */
  pairingNumber?(number: string): string;
  /** The connector of one instance. */
  create(instance: Instance, host: ConnectorHost): Connector;
  /** The kind's own routes (registered under /messenger), if any. */
  routes?: FastifyPluginAsync;
}

/** The registered kinds, and the questions other features ask about an instance's kind. */
export interface ConnectorKinds {
  /** In the order registered; the first is the integration of a create that names none. */
  readonly names: readonly string[];
  of(integration: string): ConnectorKind | undefined;
  /** Throws `not_available` ("Method not available on <label> …") when the instance's kind cannot do `operation`. */
  assertCan(instance: Pick<Instance, 'integration'>, operation: Operation): void;
  /** Whether the instance's kind sends lists as real interactive lists (else as single-choice polls). */
  listsAreInteractive(instance: Pick<Instance, 'integration'>): boolean;
}
