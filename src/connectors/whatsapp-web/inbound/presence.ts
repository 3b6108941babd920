// Presence: each participant's last known presence in a chat, reported through the host (PRESENCE_UPDATE).
import type { BaileysEventMap } from 'baileys';
import type { Presence } from '../../../core/connector.js';
import { ignoredChat, type InboundContext } from './context.js';

const presences = new Set<string>(['available', 'unavailable', 'composing', 'recording', 'paused']);
const isPresence = (value: unknown): value is Presence => typeof value === 'string' && presences.has(value);

export async function onPresence(event: BaileysEventMap['presence.update'], ctx: InboundContext): Promise<void> {
  if (ignoredChat(ctx, event.id)) return;
  const chat = await ctx.addresses.resolve(event.id);
  for (const [participant, data] of Object.entries(event.presences)) {
    if (!isPresence(data.lastKnownPresence)) continue;
    const sender = await ctx.addresses.resolve(participant);
    await ctx.host.presenceReceived(ctx.instanceId, chat.jid, sender.jid, data.lastKnownPresence);
  }
}
