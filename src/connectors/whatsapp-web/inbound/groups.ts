// Groups: GROUPS_UPSERT and GROUP_UPDATE (metadata as Baileys gives it) and GROUP_PARTICIPANTS_UPDATE with participantsData.
import type { BaileysEventMap, GroupParticipant } from 'baileys';
import { isLid, isPhoneJid } from '../jids.js';
import { plain, type InboundContext } from './context.js';

/** groupsIgnore silences every group event. */
const ignored = (ctx: InboundContext) => ctx.settings().groupsIgnore;

export async function onGroupsUpsert(groups: BaileysEventMap['groups.upsert'], ctx: InboundContext): Promise<void> {
  if (ignored(ctx) || groups.length === 0) return;
  await ctx.host.eventOccurred(ctx.instanceId, 'GROUPS_UPSERT', plain(groups));
}

export async function onGroupsUpdate(updates: BaileysEventMap['groups.update'], ctx: InboundContext): Promise<void> {
  if (ignored(ctx) || updates.length === 0) return;
  await ctx.host.eventOccurred(ctx.instanceId, 'GROUP_UPDATE', plain(updates));
}

interface ParticipantData {
  jid: string;
  phoneNumber: string | null;
  lid?: string;
  admin?: string | null;
  name?: string;
  imgUrl?: string | null;
}

async function participantData(participant: GroupParticipant, ctx: InboundContext): Promise<ParticipantData> {
  const lid = isLid(participant.id) ? participant.id : participant.lid;
  const hint = isLid(participant.id) ? participant.phoneNumber : lid;
  const address = await ctx.addresses.resolve(participant.id, hint);
  const phoneNumber = isPhoneJid(address.jid) ? address.jid : null;
  return {
    jid: address.jid,
    phoneNumber,
    ...(lid ? { lid } : {}),
    ...(participant.admin !== undefined ? { admin: participant.admin } : {}),
    ...((participant.name ?? participant.notify) ? { name: participant.name ?? participant.notify } : {}),
    ...(participant.imgUrl !== undefined && participant.imgUrl !== 'changed' ? { imgUrl: participant.imgUrl } : {}),
  };
}

/** `{id, author, participants: [address], action, participantsData: [{jid, phoneNumber, lid?, admin?, name?, imgUrl?}]}`. */
export async function onGroupParticipants(event: BaileysEventMap['group-participants.update'], ctx: InboundContext): Promise<void> {
  if (ignored(ctx)) return;
  // Baileys 6 gave participants as addresses, Baileys 7 as objects; accept both.
  const given: GroupParticipant[] = (event.participants as (GroupParticipant | string)[]).map((p) => (typeof p === 'string' ? { id: p } : p));
  const participantsData = [];
  for (const participant of given) participantsData.push(await participantData(participant, ctx));
  const author = event.author ? await ctx.addresses.resolve(event.author, event.authorPn) : null;
  await ctx.host.eventOccurred(ctx.instanceId, 'GROUP_PARTICIPANTS_UPDATE', {
    id: event.id,
    author: author?.jid ?? null,
    ...(author?.alt ? { authorAlt: author.alt } : {}),
    participants: participantsData.map((p) => p.jid),
    action: event.action,
    participantsData,
  });
}
