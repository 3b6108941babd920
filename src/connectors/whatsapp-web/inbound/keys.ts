// Message keys and numbers as event payloads report them (phone address first, the @lid form beside it).
import type { WAMessageKey } from 'baileys';
import type { InboundContext } from './context.js';

/** Seconds from a protobuf timestamp (number, Long or numeric string); 0 when absent. */
export function seconds(value: unknown): number {
  if (typeof value === 'number') return Math.floor(value);
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  if (typeof value === 'object' && value !== null && 'toNumber' in value && typeof value.toNumber === 'function') {
    const n: unknown = value.toNumber();
    return typeof n === 'number' ? n : 0;
  }
  return 0;
}

export interface KeyPayload {
  remoteJid: string;
  fromMe: boolean;
  id: string;
  participant?: string;
  remoteJidAlt?: string;
  participantAlt?: string;
}

/** `{remoteJid, fromMe, id, participant?}` with the phone address when known and the @lid form as `…Alt`. */
export async function keyPayload(key: WAMessageKey, ctx: InboundContext): Promise<KeyPayload> {
  const chat = await ctx.addresses.resolve(key.remoteJid ?? '', key.remoteJidAlt);
  const payload: KeyPayload = { remoteJid: chat.jid, fromMe: Boolean(key.fromMe), id: key.id ?? '' };
  if (chat.alt) payload.remoteJidAlt = chat.alt;
  if (key.participant) {
    const participant = await ctx.addresses.resolve(key.participant, key.participantAlt);
    payload.participant = participant.jid;
    if (participant.alt) payload.participantAlt = participant.alt;
  }
  return payload;
}
