// A queued send as the worker holds it: its queue row, its payload parsed once, its stored message read with it.
import type { OutboundMessage } from '../core/connector.js';
import { recordFromRow, type MessageRecord } from './records.js';
import type { QueuePayload } from './send-queue.js';
import type { PendingSendWithMessage, QueueRow } from './queue-queries.js';

const parsedPayloads = new WeakMap<QueueRow, QueuePayload>();
/** The stored message of each fetched queue row (read with it). */
const storedMessages = new WeakMap<QueueRow, MessageRecord>();

/** The queue rows of a chat's fetch, each one's stored message kept beside it. */
export function queueRowsOf(instanceId: string, found: PendingSendWithMessage[]): QueueRow[] {
  return found.map((joined) => {
    const {
      m_id,
      m_key_id,
      m_remote_jid,
      m_remote_jid_alt,
      m_from_me,
      m_participant,
      m_push_name,
      m_message_type,
      m_content,
      m_status,
      m_message_timestamp,
      m_source,
      ...row
    } = joined;
    // No message row: the instance is being deleted (the connector refuses a send without content).
    if (m_id !== null && m_key_id !== null && m_remote_jid !== null && m_from_me !== null && m_message_type !== null && m_content !== null) {
      storedMessages.set(
        row,
        recordFromRow({
          id: m_id,
          instance_id: instanceId,
          key_id: m_key_id,
          remote_jid: m_remote_jid,
          remote_jid_alt: m_remote_jid_alt,
          from_me: m_from_me,
          participant: m_participant,
          participant_alt: null,
          push_name: m_push_name,
          message_type: m_message_type,
          content: m_content,
          status: m_status ?? 'PENDING',
          message_timestamp: m_message_timestamp ?? 0,
          source: m_source ?? 'unknown',
        }),
      );
    }
    return row;
  });
}

/** The stored message of a fetched queue row; none when the row was read without one. */
export function storedMessageOf(row: QueueRow): MessageRecord | undefined {
  return storedMessages.get(row);
}

/** A queue row's payload, parsed once per fetched row (the batch check and the send both read it). */
export function payloadOf(row: QueueRow): QueuePayload {
  let payload = parsedPayloads.get(row);
  if (!payload) {
    payload = JSON.parse(row.payload) as QueuePayload;
    parsedPayloads.set(row, payload);
  }
  return payload;
}

/** The message to hand the connector: the queue entry's routing with the stored message's content. */
export function outboundOf(payload: QueuePayload, content: Record<string, unknown> | undefined): OutboundMessage {
  // A queue entry whose message row is gone (instance deleted meanwhile) cannot be sent: the connector refuses it.
  return { ...payload.outbound, content: content ?? {} };
}
