// Incoming messages: new ones, history, status changes, edits and deletions, with the live read settings applied.
import type { BaileysEventMap, WAMessage, WAMessageKey } from 'baileys';
import type { InboundMessage } from '../../../core/connector.js';
import { contentToJson, inboundContent } from '../content.js';
import { statusFromBaileys, statusFromReceipt } from '../status.js';
import { ignoredChat, type InboundContext } from './context.js';
import { keyPayload, seconds } from './keys.js';
import { contactPayload } from './contacts.js';

/** A Baileys message as the core's inbound message, or null when it is nothing a client should see. */
async function toInbound(message: WAMessage, ctx: InboundContext): Promise<InboundMessage | null> {
  const { key } = message;
  if (!key?.id || !key.remoteJid) return null;
  const parsed = inboundContent(message.message);
  if (!parsed) return null;
  const chat = await ctx.addresses.resolve(key.remoteJid, key.remoteJidAlt);
  const sender = key.participant ?? message.participant ?? null;
  const participant = sender ? await ctx.addresses.resolve(sender, key.participantAlt) : null;
  return {
    keyId: key.id,
    remoteJid: chat.jid,
    remoteJidAlt: chat.alt ?? null,
    fromMe: Boolean(key.fromMe),
    participant: participant?.jid ?? null,
    participantAlt: participant?.alt ?? null,
    pushName: message.pushName ?? null,
    messageType: parsed.messageType,
    content: parsed.content,
    timestamp: seconds(message.messageTimestamp) || Math.floor(Date.now() / 1000),
  };
}

/** readMessages marks every incoming message read; readStatus marks statuses seen (and is what lets them in at all). */
async function markReadIfWanted(key: WAMessageKey, ctx: InboundContext): Promise<void> {
  if (key.fromMe) return;
  const settings = ctx.settings();
  const isStatus = key.remoteJid === 'status@broadcast';
  if (isStatus ? !settings.readStatus : !settings.readMessages) return;
  try {
    await ctx.socket.readMessages([key]);
  } catch (error) {
    ctx.logger.warn({ err: error }, 'marking a message read failed');
  }
}

/**
 * New messages. `notify` ones arrived live; `append` ones arrived while this device was offline (or were sent from
 * the phone): both are messages the instance received, so both are reported (the store ignores repeats).
 */
export async function onMessagesUpsert(event: BaileysEventMap['messages.upsert'], ctx: InboundContext): Promise<void> {
  for (const message of event.messages) {
    if (ignoredChat(ctx, message.key?.remoteJid)) continue;
    const inbound = await toInbound(message, ctx);
    if (!inbound) continue;
    const sender = message.key.participant ?? message.participant;
    if (sender && !message.key.fromMe) ctx.rememberSender(inbound.keyId, sender);
    await ctx.host.messageReceived(ctx.instanceId, inbound);
    await markReadIfWanted(message.key, ctx);
  }
}

/** History sync: chats (CHATS_SET), contacts (CONTACTS_UPSERT), then the messages themselves (MESSAGES_SET). */
export async function onHistorySet(event: BaileysEventMap['messaging-history.set'], ctx: InboundContext): Promise<void> {
  for (const mapping of event.lidPnMappings ?? []) ctx.addresses.remember(mapping.lid, mapping.pn);
  const chats = [];
  for (const chat of event.chats) {
    if (!chat.id || ignoredChat(ctx, chat.id)) continue;
    const address = await ctx.addresses.resolve(chat.id, chat.pnJid ?? chat.lidJid);
    chats.push({
      remoteJid: address.jid,
      ...(address.alt ? { remoteJidAlt: address.alt } : {}),
      instanceId: ctx.instanceId,
      name: chat.name ?? null,
    });
  }
  if (chats.length > 0) await ctx.host.eventOccurred(ctx.instanceId, 'CHATS_SET', chats);
  const contacts = [];
  for (const contact of event.contacts) {
    if (ignoredChat(ctx, contact.id)) continue;
    contacts.push(await contactPayload(contact, ctx));
  }
  if (contacts.length > 0) await ctx.host.eventOccurred(ctx.instanceId, 'CONTACTS_UPSERT', contacts);
  const messages: InboundMessage[] = [];
  for (const message of event.messages) {
    if (ignoredChat(ctx, message.key?.remoteJid)) continue;
    const inbound = await toInbound(message, ctx);
    if (inbound) messages.push(inbound);
  }
  if (messages.length > 0) await ctx.host.messagesSynced(ctx.instanceId, messages);
}

/**
 * Message updates: a deletion for everyone (`message: null`) and an edit → the core's change of the stored message
 * (MESSAGES_DELETE, MESSAGES_EDITED; a deletion is never reported as an edit too); a status (0–5) → the core's status
 * record (MESSAGES_UPDATE). Baileys also delivers the REVOKE / MESSAGE_EDIT protocol messages in messages.upsert,
 * where they are skipped (inboundContent), so each change is reported once.
 * Poll votes are not reported (their tally needs the poll's secret; see the report).
 */
export async function onMessagesUpdate(updates: BaileysEventMap['messages.update'], ctx: InboundContext): Promise<void> {
  for (const { key, update } of updates) {
    if (!key?.id || ignoredChat(ctx, key.remoteJid)) continue;
    if (update.message === null) {
      await ctx.host.messageChanged(ctx.instanceId, { kind: 'revoke', key: await keyPayload(key, ctx) });
      continue;
    }
    const edited = update.message?.editedMessage?.message;
    if (edited) {
      const at = seconds(update.messageTimestamp) || Math.floor(Date.now() / 1000);
      await ctx.host.messageChanged(ctx.instanceId, { kind: 'edit', key: await keyPayload(key, ctx), content: contentToJson(edited), timestampMs: at * 1000 });
      continue;
    }
    const status = statusFromBaileys(update.status);
    if (status) await ctx.host.messageStatus(ctx.instanceId, key.id, status);
  }
}

/** Per-user receipts (group messages, statuses): the furthest step each one records. */
export async function onReceipts(updates: BaileysEventMap['message-receipt.update'], ctx: InboundContext): Promise<void> {
  for (const { key, receipt } of updates) {
    if (!key?.id || ignoredChat(ctx, key.remoteJid)) continue;
    const status = statusFromReceipt(receipt);
    if (status) await ctx.host.messageStatus(ctx.instanceId, key.id, status);
  }
}

/** Deletions Baileys reports by key (e.g. "delete for me" synced from the phone); clearing a whole chat is not reported. */
export async function onMessagesDelete(event: BaileysEventMap['messages.delete'], ctx: InboundContext): Promise<void> {
  if (!('keys' in event)) return;
  for (const key of event.keys) {
    if (!key?.id || ignoredChat(ctx, key.remoteJid)) continue;
    await ctx.host.eventOccurred(ctx.instanceId, 'MESSAGES_DELETE', await keyPayload(key, ctx));
  }
}
