// What another feature keeps with every message stored (the history store's chats and contacts), in the message's unit.
import type { RowSink, UpsertSink } from '../platform/store/unit.js';
import type { MessageRecord } from './records.js';

export interface StoredMessageHook {
  /** Undefined when writes for the instance's messages can be queued now; else resolves once they can (state loaded). */
  ready(instanceId: string): Promise<void> | undefined;
  /**
   * Queues into `unit` what goes with `record`, and its events into `announce`: the unit itself, or (a received
   * message) the unit's rows kept only if the message is stored, not already there. `synced`: an old message of a
   * history sync (it is no unread news, and the messenger's own chat and contact lists announced its chat).
   */
  stored(unit: UpsertSink, record: MessageRecord, announce: RowSink, arrival?: 'live' | 'synced'): void;
}
