// Calls: every call update as a CALL event; an offered call is rejected when rejectCall is on, then msgCall is sent.
import type { BaileysEventMap, WACallEvent } from 'baileys';
import { newMessageId } from '../../../messages/ids.js';
import { plain, type InboundContext } from './context.js';

/** The Baileys call object (date as ISO text), with the caller's phone address first when known and the @lid as fromAlt. */
async function callPayload(call: WACallEvent, ctx: InboundContext) {
  const from = await ctx.addresses.resolve(call.from, call.callerPn);
  const chat = await ctx.addresses.resolve(call.chatId, call.callerPn);
  return {
    ...(plain(call) as Record<string, unknown>),
    from: from.jid,
    ...(from.alt ? { fromAlt: from.alt } : {}),
    chatId: chat.jid,
  };
}

/** Rejects the call and, when msgCall is set, tells the caller why (the message is stored and announced as sent). */
async function reject(call: WACallEvent, callerJid: string, ctx: InboundContext): Promise<void> {
  await ctx.socket.rejectCall(call.id, call.from);
  ctx.logger.info({ callId: call.id }, 'incoming call rejected (rejectCall)');
  const text = ctx.settings().msgCall;
  if (!text) return;
  const keyId = newMessageId();
  await ctx.socket.relayMessage(callerJid, { conversation: text }, { messageId: keyId });
  await ctx.host.messageReceived(ctx.instanceId, {
    keyId,
    remoteJid: callerJid,
    fromMe: true,
    participant: null,
    pushName: null,
    messageType: 'conversation',
    content: { conversation: text },
    timestamp: Math.floor(Date.now() / 1000),
  });
}

export async function onCalls(calls: BaileysEventMap['call'], ctx: InboundContext): Promise<void> {
  for (const call of calls) {
    const payload = await callPayload(call, ctx);
    await ctx.host.eventOccurred(ctx.instanceId, 'CALL', payload);
    if (call.status === 'offer' && ctx.settings().rejectCall) {
      try {
        await reject(call, payload.from, ctx);
      } catch (error) {
        ctx.logger.warn({ err: error, callId: call.id }, 'rejecting a call failed');
      }
    }
  }
}
