// Groups through the socket: Baileys' group functions, WhatsApp's refusals as coded errors, and the group metadata
// cached per group (dropped on the group's events and on our own changes, refreshed after an hour at most).
import type { GroupMetadata as BaileysGroupMetadata } from 'baileys';
import { TransientConnectorError, type GroupMetadata, type GroupsModule } from '../../core/connector.js';
import { invalidInput, notFound } from '../../core/errors.js';
import { BoundedMap } from './bounded-map.js';
import { isConnectionFailure, statusCodeOf } from './disconnect.js';
import type { WaSocket } from './socket.js';

const cacheLimit = 2_000;
const cacheTtlMs = 60 * 60_000;

/**
 * Group metadata by group address, as last fetched or reported. Baileys reads it for every group send
 * (`cachedGroupMetadata`), so a send to a big group costs no metadata query while nothing changed.
 */
export class GroupMetadataCache {
  private readonly entries = new BoundedMap<string, { metadata: BaileysGroupMetadata; at: number }>(cacheLimit);

  constructor(private readonly now: () => number = Date.now) {}

  get(jid: string): BaileysGroupMetadata | undefined {
    const entry = this.entries.get(jid);
    return entry && this.now() - entry.at < cacheTtlMs ? entry.metadata : undefined;
  }

  set(metadata: BaileysGroupMetadata): void {
    this.entries.set(metadata.id, { metadata, at: this.now() });
  }

  drop(jid: string): void {
    this.entries.delete(jid);
  }

  clear(): void {
    this.entries.clear();
  }

  /** The cached metadata, else fetched from WhatsApp (and kept). */
  async fetch(socket: WaSocket, jid: string): Promise<BaileysGroupMetadata> {
    const cached = this.get(jid);
    if (cached) return cached;
    const metadata = await socket.groupMetadata(jid);
    this.set(metadata);
    return metadata;
  }
}

/** Baileys' metadata in the contract's shape (its extra `*Pn` fields kept, undefined ones left out). */
function metadataOf(found: BaileysGroupMetadata): GroupMetadata {
  const optional = <K extends keyof BaileysGroupMetadata>(...keys: K[]) => {
    const out: Record<string, unknown> = {};
    for (const key of keys) if (found[key] !== undefined && found[key] !== null) out[key] = found[key];
    return out;
  };
  return {
    id: found.id,
    subject: found.subject ?? '',
    ...optional('notify', 'addressingMode', 'subjectOwner', 'subjectOwnerPn', 'subjectTime', 'creation', 'owner', 'ownerPn', 'owner_country_code'),
    ...optional('desc', 'descId', 'descOwner', 'descOwnerPn', 'descTime', 'linkedParent', 'joinApprovalMode', 'memberAddMode', 'ephemeralDuration'),
    size: found.size ?? found.participants.length,
    restrict: found.restrict === true,
    announce: found.announce === true,
    isCommunity: found.isCommunity === true,
    isCommunityAnnounce: found.isCommunityAnnounce === true,
    participants: found.participants.map((p) => ({
      id: p.id,
      ...(p.phoneNumber ? { phoneNumber: p.phoneNumber } : {}),
      ...(p.lid ? { lid: p.lid } : {}),
      admin: p.admin ?? null,
    })),
  } as GroupMetadata;
}

/**
 * What WhatsApp answered, as the API answers it: an unknown group or invite is a 404, a refusal (not an admin, not a
 * member, a full group) a 400 with WhatsApp's words, a lost connection a transient failure (503).
 */
function refusalOf(error: unknown, subject: string): unknown {
  if (isConnectionFailure(error)) return new TransientConnectorError(`the WhatsApp connection failed: ${messageOf(error)}`);
  const code = statusCodeOf(error);
  if (code === 404) return notFound(`${subject} was not found (WhatsApp answered: ${messageOf(error)})`);
  if (code !== undefined && code >= 400 && code < 500) return invalidInput(`WhatsApp refused it for ${subject}: ${messageOf(error)} (${code})`);
  return error;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs a group call, turning WhatsApp's errors into the API's. */
async function call<T>(subject: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw refusalOf(error, subject);
  }
}

export function groupsModule(socket: () => WaSocket, cache: GroupMetadataCache): GroupsModule {
  /** A change of the group through the API: its cached metadata is dropped (WhatsApp's notification follows). */
  const change = async (jid: string, work: (live: WaSocket) => Promise<unknown>) => {
    await call(`group ${jid}`, () => work(socket()));
    cache.drop(jid);
  };
  return {
    create: async (subject, participants) => {
      const created = await call('the new group', () => socket().groupCreate(subject, participants));
      cache.set(created);
      return metadataOf(created);
    },
    metadata: async (jid) => metadataOf(await call(`group ${jid}`, () => cache.fetch(socket(), jid))),
    participating: async () => {
      const all = await call('the groups of this account', () => socket().groupFetchAllParticipating());
      for (const metadata of Object.values(all)) cache.set(metadata);
      return Object.values(all).map(metadataOf);
    },
    pictureUrl: async (jid) => {
      try {
        return (await socket().profilePictureUrl(jid, 'image')) ?? null;
      } catch {
        return null;
      }
    },
    updateSubject: (jid, subject) => change(jid, (live) => live.groupUpdateSubject(jid, subject)),
    // An empty description removes it (Baileys sends a delete when none is given).
    updateDescription: (jid, description) => change(jid, (live) => live.groupUpdateDescription(jid, description === '' ? undefined : description)),
    updatePicture: (jid, jpeg) => change(jid, (live) => live.updateProfilePicture(jid, jpeg)),
    inviteCode: async (jid) => {
      const code = await call(`group ${jid}`, () => socket().groupInviteCode(jid));
      if (!code) throw invalidInput(`WhatsApp gave no invite code for group ${jid}`);
      return code;
    },
    revokeInvite: async (jid) => {
      const code = await call(`group ${jid}`, () => socket().groupRevokeInvite(jid));
      if (!code) throw invalidInput(`WhatsApp gave no new invite code for group ${jid}`);
      return code;
    },
    inviteInfo: async (code) => metadataOf(await call(`invite code ${code}`, () => socket().groupGetInviteInfo(code))),
    acceptInvite: async (code) => {
      const jid = await call(`invite code ${code}`, () => socket().groupAcceptInvite(code));
      if (!jid) throw invalidInput(`WhatsApp did not say which group invite code ${code} joined`);
      cache.drop(jid);
      return jid;
    },
    updateParticipants: async (jid, participants, action) => {
      const results = await call(`group ${jid}`, () => socket().groupParticipantsUpdate(jid, participants, action));
      cache.drop(jid);
      return results.map((result, i) => ({
        status: result.status,
        jid: result.jid ?? participants[i],
        ...(result.content ? { content: result.content as unknown as Record<string, unknown> } : {}),
      }));
    },
    updateSetting: (jid, setting) => change(jid, (live) => live.groupSettingUpdate(jid, setting)),
    toggleEphemeral: (jid, expiration) => change(jid, (live) => live.groupToggleEphemeral(jid, expiration)),
    leave: (jid) => change(jid, (live) => live.groupLeave(jid)),
  };
}
