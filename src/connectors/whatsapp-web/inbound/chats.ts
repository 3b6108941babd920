// Chats: CHATS_UPSERT `{remoteJid, instanceId, name, unreadMessages}`, CHATS_UPDATE `{remoteJid, instanceId}`, CHATS_DELETE [jid].
import type { BaileysEventMap } from 'baileys';
import { ignoredChat, type InboundContext } from './context.js';

async function address(ctx: InboundContext, chat: { id?: string | null; pnJid?: string | null; lidJid?: string | null }) {
  const resolved = await ctx.addresses.resolve(chat.id ?? '', chat.pnJid ?? chat.lidJid);
  return { remoteJid: resolved.jid, ...(resolved.alt ? { remoteJidAlt: resolved.alt } : {}) };
}

export async function onChatsUpsert(chats: BaileysEventMap['chats.upsert'], ctx: InboundContext): Promise<void> {
  const payloads = [];
  for (const chat of chats) {
    if (!chat.id || ignoredChat(ctx, chat.id)) continue;
    payloads.push({ ...(await address(ctx, chat)), instanceId: ctx.instanceId, name: chat.name ?? null, unreadMessages: chat.unreadCount ?? 0 });
  }
  if (payloads.length > 0) await ctx.host.eventOccurred(ctx.instanceId, 'CHATS_UPSERT', payloads);
}

export async function onChatsUpdate(updates: BaileysEventMap['chats.update'], ctx: InboundContext): Promise<void> {
  const payloads = [];
  for (const update of updates) {
    if (!update.id || ignoredChat(ctx, update.id)) continue;
    payloads.push({ ...(await address(ctx, update)), instanceId: ctx.instanceId });
  }
  if (payloads.length > 0) await ctx.host.eventOccurred(ctx.instanceId, 'CHATS_UPDATE', payloads);
}

export async function onChatsDelete(ids: BaileysEventMap['chats.delete'], ctx: InboundContext): Promise<void> {
  const kept = [];
  for (const id of ids) {
    if (ignoredChat(ctx, id)) continue;
    kept.push((await ctx.addresses.resolve(id)).jid);
  }
  if (kept.length > 0) await ctx.host.eventOccurred(ctx.instanceId, 'CHATS_DELETE', kept);
}
