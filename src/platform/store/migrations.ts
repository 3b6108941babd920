// Versioned schema migrations, one list for SQLite and PostgreSQL, applied at start.
import { type Kysely, Migrator, sql, type ColumnDefinitionBuilder, type Migration, type MigrationProvider } from 'kysely';
import type { Dialect } from './types.js';

function serial(dialect: Dialect) {
  return dialect === 'postgres' ? 'bigserial' : 'integer';
}

function initial(dialect: Dialect): Migration {
  const idColumn = (builder: ColumnDefinitionBuilder) => (dialect === 'postgres' ? builder.primaryKey() : builder.primaryKey().autoIncrement());
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('instances')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('integration', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('owner_jid', 'text')
        .addColumn('profile_name', 'text')
        .addColumn('profile_pic_url', 'text')
        .addColumn('profile_status', 'text')
        .addColumn('number', 'text')
        .addColumn('business_id', 'text')
        .addColumn('apikey_hash', 'text', (c) => c.notNull().unique())
        .addColumn('apikey_sealed', 'text', (c) => c.notNull())
        .addColumn('provider_token_sealed', 'text')
        .addColumn('reject_call', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('msg_call', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('groups_ignore', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('always_online', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('read_messages', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('read_status', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('sync_full_history', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('privacy', 'text')
        .addColumn('disconnection_reason', 'text')
        .addColumn('disconnected_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('instances_owner').on('instances').columns(['integration', 'owner_jid']).execute();

      await db.schema
        .createTable('event_sinks')
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('sink', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('options', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('event_sinks_pk', ['instance_id', 'sink'])
        .execute();

      await db.schema
        .createTable('messages')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('remote_jid', 'text', (c) => c.notNull())
        .addColumn('from_me', 'integer', (c) => c.notNull())
        .addColumn('participant', 'text')
        .addColumn('push_name', 'text')
        .addColumn('message_type', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('message_timestamp', 'bigint', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('idempotency_key', 'text')
        .addColumn('request_hash', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('messages_key').on('messages').columns(['instance_id', 'key_id', 'from_me']).unique().execute();
      await db.schema
        .createIndex('messages_idempotency')
        .on('messages')
        .columns(['instance_id', 'idempotency_key'])
        .unique()
        .where(sql.ref('idempotency_key'), 'is not', null)
        .execute();
      await db.schema.createIndex('messages_chat').on('messages').columns(['instance_id', 'remote_jid', 'created_at']).execute();

      await db.schema
        .createTable('message_status')
        .addColumn('id', serial(dialect), idColumn)
        .addColumn('message_id', 'text', (c) => c.notNull())
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('detail', 'text')
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('message_status_message').on('message_status').columns(['message_id', 'id']).execute();
      await db.schema.createIndex('message_status_instance').on('message_status').column('instance_id').execute();

      await db.schema
        .createTable('send_queue')
        .addColumn('seq', serial(dialect), idColumn)
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text', (c) => c.notNull())
        .addColumn('chat_jid', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('send_queue_pending').on('send_queue').columns(['instance_id', 'state', 'seq']).execute();

      await db.schema
        .createTable('outbox')
        .addColumn('seq', serial(dialect), idColumn)
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('instance_id', 'text')
        .addColumn('instance_name', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('outbox_instance').on('outbox').columns(['instance_id', 'seq']).execute();

      await db.schema
        .createTable('deliveries')
        .addColumn('id', serial(dialect), idColumn)
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('outbox_seq', 'bigint', (c) => c.notNull())
        .addColumn('instance_id', 'text')
        .addColumn('instance_name', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('last_status', 'integer')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('delivered_at', 'bigint')
        .execute();
      await db.schema.createIndex('deliveries_pending').on('deliveries').columns(['state', 'target', 'instance_id', 'id']).execute();
      await db.schema.createIndex('deliveries_instance').on('deliveries').columns(['instance_name', 'id']).execute();

      await db.schema
        .createTable('sessions')
        .addColumn('instance_id', 'text', (c) => c.primaryKey())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('sandbox_codes')
        .addColumn('code', 'text', (c) => c.primaryKey())
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sandbox_codes_instance').on('sandbox_codes').column('instance_id').execute();
    },
  };
}

function sessionKeysAndMedia(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('session_keys')
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('session_keys_pk', ['instance_id', 'type', 'id'])
        .execute();
      await db.schema
        .createTable('media_blobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('media_blobs_instance').on('media_blobs').column('instance_id').execute();
      await db.schema
        .createTable('broker_cursors')
        .addColumn('sink', 'text', (c) => c.primaryKey())
        .addColumn('last_seq', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .ifNotExists()
        .execute();
      await db.schema
        .createTable('broker_leases')
        .addColumn('sink', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('lease_until', 'bigint', (c) => c.notNull())
        .ifNotExists()
        .execute();
    },
  };
}

const queueByChat: Migration = {
  async up(db: Kysely<unknown>) {
    // Lane heads of the send worker: the first pending send of each chat of an instance.
    await db.schema.createIndex('send_queue_chat').on('send_queue').columns(['instance_id', 'state', 'chat_jid', 'seq']).execute();
  },
};

const leanerIndexes: Migration = {
  async up(db: Kysely<unknown>) {
    // Every lookup of an instance's queue goes through send_queue_chat; the expiry sweep needs expires_at instead.
    await db.schema.dropIndex('send_queue_pending').execute();
    await db.schema.createIndex('send_queue_expiry').on('send_queue').columns(['expires_at', 'seq']).execute();
    // Nothing reads a message's status history by message: one index less to keep up on every status change.
    await db.schema.dropIndex('message_status_message').execute();
  },
};

const deliverySettingsSnapshot: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('deliveries').addColumn('settings_snapshot', 'text').execute();
  },
};

/**
 * Pending deliveries indexed alone: the index of lane heads and batches stays the size of the backlog, and a delivery
 * settling (no longer pending) adds nothing to it. On PostgreSQL, room left in each page of deliveries lets a claim
 * (which changes no indexed column) update its row in place, without new index entries.
 */
function pendingDeliveries(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('deliveries_pending').execute();
      await db.schema
        .createIndex('deliveries_pending')
        .on('deliveries')
        .columns(['target', 'instance_id', 'id'])
        .where(sql.ref('state'), '=', 'pending')
        .execute();
      if (dialect === 'postgres') await sql`alter table deliveries set (fillfactor = 70)`.execute(db);
    },
  };
}

/**
 * PostgreSQL: room left in each page of messages and send_queue, so the send worker's updates (a message's status, a
 * queued send's attempt count: no indexed column changes) are made in place (HOT) instead of adding an entry to every
 * index of the table; 10-15 % less PostgreSQL time per delivered send (bench/RESULTS.md, session 9). Pages filled from
 * now on keep the room; existing ones fill up as before. SQLite has no such setting.
 */
function roomForStatusUpdates(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      await sql`alter table messages set (fillfactor = 80)`.execute(db);
      await sql`alter table send_queue set (fillfactor = 70)`.execute(db);
    },
  };
}

/** The brokers an event was wanted on, decided when it is written (the sinks' outbox marks, see `events/writer.ts`). */
const outboxBrokerWants: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('outbox').addColumn('broker_wants', 'integer').execute();
  },
};

/**
 * The history store (`history/`): chats and contacts, one row per address and instance; a chat's messages newest
 * first by index (findMessages pages one chat alike with a thousand or a million messages stored); a message's status
 * history by message again (findMessages' `MessageUpdate`, findStatusMessage: one index more per status row).
 */
const history: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('chats')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('instance_id', 'text', (c) => c.notNull())
      .addColumn('remote_jid', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('unread_messages', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('marked_unread', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('labels', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('last_message_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('chats_address').on('chats').columns(['instance_id', 'remote_jid']).unique().execute();
    await db.schema.createIndex('chats_recent').on('chats').columns(['instance_id', 'last_message_at']).execute();
    await db.schema
      .createTable('contacts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('instance_id', 'text', (c) => c.notNull())
      .addColumn('remote_jid', 'text', (c) => c.notNull())
      .addColumn('push_name', 'text')
      .addColumn('profile_pic_url', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('contacts_address').on('contacts').columns(['instance_id', 'remote_jid']).unique().execute();
    // Replaces messages_chat (by chat and created_at, which nothing ordered by): the same number of indexes per send.
    await db.schema.createIndex('messages_chat_time').on('messages').columns(['instance_id', 'remote_jid', 'message_timestamp', 'id']).execute();
    await db.schema.dropIndex('messages_chat').execute();
    await db.schema.createIndex('message_status_message').on('message_status').columns(['message_id', 'id']).execute();
  },
};

/** An instance's own pacing of its sends, field by field; null: the service's default (PACING_* variables). */
const pacing: Migration = {
  async up(db: Kysely<unknown>) {
    for (const column of ['pacing_enabled', 'pacing_max_per_minute', 'pacing_min_gap_ms', 'pacing_max_gap_ms', 'pacing_new_chat_delay_ms']) {
      await db.schema.alterTable('instances').addColumn(column, 'integer').execute();
    }
  },
};

/** Both addresses of a chat and of a group sender: the phone one and the @lid one (WhatsApp's privacy addresses). */
const alternateAddresses: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('messages').addColumn('remote_jid_alt', 'text').execute();
    await db.schema.alterTable('messages').addColumn('participant_alt', 'text').execute();
  },
};

/** The sandbox's blocked accounts: who each sandbox instance blocked (their messages no longer reach it). */
const sandboxBlocks: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sandbox_blocks')
      .addColumn('instance_id', 'text', (c) => c.notNull())
      .addColumn('jid', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('sandbox_blocks_pk', ['instance_id', 'jid'])
      .execute();
  },
};

/**
 * The sandbox's groups (one network for all sandbox instances): each group's info, settings and invite code, and its
 * members by phone address with their rank (superadmin, admin, member).
 */
const sandboxGroups: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sandbox_groups')
      .addColumn('jid', 'text', (c) => c.primaryKey())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('subject_owner', 'text', (c) => c.notNull())
      .addColumn('subject_time', 'bigint', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('desc_id', 'text')
      .addColumn('desc_owner', 'text')
      .addColumn('desc_time', 'bigint')
      .addColumn('picture_file', 'text')
      .addColumn('owner_jid', 'text', (c) => c.notNull())
      .addColumn('creation', 'bigint', (c) => c.notNull())
      .addColumn('announce', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('locked', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('ephemeral', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('invite_code', 'text', (c) => c.notNull().unique())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('sandbox_group_members')
      .addColumn('group_jid', 'text', (c) => c.notNull())
      .addColumn('jid', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('added_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('sandbox_group_members_pk', ['group_jid', 'jid'])
      .execute();
  },
};

/**
 * Labels (`label/*`): each instance's labels as its messenger reports them, the sandbox messenger's own labels, and the
 * Cloud API message templates created through the API (`template/create`).
 */
const labelsAndTemplates: Migration = {
  async up(db: Kysely<unknown>) {
    for (const table of ['labels', 'sandbox_labels']) {
      await db.schema
        .createTable(table)
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('label_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('color', 'integer', (c) => c.notNull())
        .addColumn('predefined_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint(`${table}_pk`, ['instance_id', 'label_id'])
        .execute();
    }
    await db.schema
      .createTable('templates')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('instance_id', 'text', (c) => c.notNull())
      .addColumn('template_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('template', 'text', (c) => c.notNull())
      .addColumn('webhook_url', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('templates_instance').on('templates').columns(['instance_id', 'created_at']).execute();
  },
};

/**
 * The nodes of a fleet (`nodes`: one row per incarnation, with its heartbeat) and who holds each claimed webhook
 * delivery (`deliveries.claimed_by`, an incarnation): the claims of a dead node are taken over as soon as it is dead.
 */
const nodes: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('nodes')
      .addColumn('incarnation', 'text', (c) => c.primaryKey())
      .addColumn('node_id', 'text', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
      .addColumn('stopped_at', 'bigint')
      .execute();
    await db.schema.alterTable('deliveries').addColumn('claimed_by', 'text').execute();
    // Claims in flight are few: the index holds only them.
    await db.schema.createIndex('deliveries_claimed').on('deliveries').column('claimed_by').where(sql.ref('claimed_by'), 'is not', null).execute();
  },
};

/** Each instance's outbound proxy (one row at most); the password sealed like every stored secret. */
const proxies: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('instance_proxies')
      .addColumn('instance_id', 'text', (c) => c.primaryKey())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('protocol', 'text', (c) => c.notNull())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('port', 'integer', (c) => c.notNull())
      .addColumn('username', 'text')
      .addColumn('password_sealed', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};

/**
 * A fleet: where each node can be reached by the others (requests carried to an instance's owner), and which node
 * incarnation owns each instance's live connection, under a fencing generation raised at every change of owner.
 */
const instanceOwners: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('nodes').addColumn('address', 'text').execute();
    await db.schema
      .createTable('instance_owners')
      .addColumn('instance_id', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text')
      .addColumn('generation', 'bigint', (c) => c.notNull())
      .addColumn('since', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('instance_owners_owner').on('instance_owners').column('owner').execute();
  },
};

/**
 * Singleton jobs of a fleet (broker relays, event retention): which node incarnation runs each. A holder keeps its
 * job while its heartbeat is recent; the ad-hoc `broker_leases` (leases by NODE_ID and time) is replaced by it.
 */
const jobLeases: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('job_leases')
      .addColumn('job', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('since', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.dropTable('broker_leases').ifExists().execute();
  },
};

/**
 * The sandbox across the nodes of a fleet: which node has each sandbox instance live (`sandbox_live`, one row per
 * instance, written by the node whose connector is open), and the letters waiting for a sandbox instance live on
 * another node (`sandbox_mail`: messages, receipts, presence, changes, group events), taken in order by that node;
 * sandbox media and pictures kept in the store (`sandbox_files`), as each node has a DATA_DIR of its own.
 */
function sandboxMail(dialect: Dialect): Migration {
  const idColumn = (builder: ColumnDefinitionBuilder) => (dialect === 'postgres' ? builder.primaryKey() : builder.primaryKey().autoIncrement());
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sandbox_live')
        .addColumn('instance_id', 'text', (c) => c.primaryKey())
        .addColumn('incarnation', 'text', (c) => c.notNull())
        .addColumn('owner_jid', 'text', (c) => c.notNull())
        .addColumn('profile_name', 'text', (c) => c.notNull())
        .addColumn('since', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('sandbox_mail')
        .addColumn('id', serial(dialect), idColumn)
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sandbox_mail_instance').on('sandbox_mail').columns(['instance_id', 'id']).execute();
      // Sandbox media and profile pictures when nodes share the store (each node's DATA_DIR is its own).
      await db.schema
        .createTable('sandbox_files')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}

class ListProvider implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return {
      '0001_initial': initial(this.dialect),
      '0002_session_keys_media_cursors': sessionKeysAndMedia(this.dialect),
      '0003_send_queue_chat_index': queueByChat,
      '0004_leaner_indexes': leanerIndexes,
      '0005_delivery_settings_snapshot': deliverySettingsSnapshot,
      '0006_pending_deliveries_index': pendingDeliveries(this.dialect),
      '0007_room_for_status_updates': roomForStatusUpdates(this.dialect),
      '0008_outbox_broker_wants': outboxBrokerWants,
      '0009_history': history,
      '0010_pacing': pacing,
      '0011_sandbox_blocks': sandboxBlocks,
      '0014_alternate_addresses': alternateAddresses,
      '0015_groups': sandboxGroups,
      '0016_labels': labelsAndTemplates,
      '0017_proxy': proxies,
      '0019_nodes': nodes,
      '0020_instance_owners': instanceOwners,
      '0021_job_leases': jobLeases,
      '0022_sandbox_mail': sandboxMail(this.dialect),
    };
  }
}

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrate(db: Kysely<unknown>, dialect: Dialect, schema?: string): Promise<void> {
  // On PostgreSQL the migration tables are looked up in our own schema only: tables of the same name in other
  // schemas of a shared database must not be taken for ours.
  const migrator = new Migrator({
    db,
    provider: new ListProvider(dialect),
    // Features are built side by side, each with its own numbered migration: one numbered below a migration a store
    // already has (merged later) is applied all the same. Every migration stands alone (no one needs another's order).
    allowUnorderedMigrations: true,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}
