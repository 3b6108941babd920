// Contacts: CONTACTS_UPSERT / CONTACTS_UPDATE as `{remoteJid, pushName, profilePicUrl, instanceId}` (+ remoteJidAlt).
import type { BaileysEventMap, Contact } from 'baileys';
import { isLid, isPhoneJid } from '../jids.js';
import { ignoredChat, type InboundContext } from './context.js';

export interface ContactPayload {
  remoteJid: string;
  remoteJidAlt?: string;
  pushName: string | null;
  profilePicUrl: string | null;
  instanceId: string;
}

/** Baileys' imgUrl: a URL, null (no picture) or the word 'changed' (a new one we have not fetched: unknown here). */
function pictureOf(contact: Partial<Contact>): string | null {
  return typeof contact.imgUrl === 'string' && contact.imgUrl !== 'changed' ? contact.imgUrl : null;
}

export async function contactPayload(contact: Partial<Contact>, ctx: InboundContext): Promise<ContactPayload> {
  const id = contact.id ?? '';
  const lid = isLid(id) ? id : contact.lid;
  const phone = isPhoneJid(id) ? id : contact.phoneNumber;
  ctx.addresses.remember(lid, phone);
  const address = await ctx.addresses.resolve(id, isLid(id) ? phone : lid);
  return {
    remoteJid: address.jid,
    ...(address.alt ? { remoteJidAlt: address.alt } : {}),
    pushName: contact.name ?? contact.notify ?? contact.verifiedName ?? null,
    profilePicUrl: pictureOf(contact),
    instanceId: ctx.instanceId,
  };
}

async function report(event: 'CONTACTS_UPSERT' | 'CONTACTS_UPDATE', contacts: Partial<Contact>[], ctx: InboundContext): Promise<void> {
  const payloads = [];
  for (const contact of contacts) {
    if (!contact.id || ignoredChat(ctx, contact.id)) continue;
    payloads.push(await contactPayload(contact, ctx));
  }
  if (payloads.length > 0) await ctx.host.eventOccurred(ctx.instanceId, event, payloads);
}

export const onContactsUpsert = (contacts: BaileysEventMap['contacts.upsert'], ctx: InboundContext) => report('CONTACTS_UPSERT', contacts, ctx);
export const onContactsUpdate = (contacts: BaileysEventMap['contacts.update'], ctx: InboundContext) => report('CONTACTS_UPDATE', contacts, ctx);
