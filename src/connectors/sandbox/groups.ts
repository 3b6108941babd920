// Groups on the sandbox network: WhatsApp's rules (admins, locked info, announcement mode), invites, the events every
// member instance receives, and group messages fanned out to every member.
import { randomInt } from 'node:crypto';
import type {
  ConnectorHost,
  GroupMetadata,
  GroupParticipant,
  GroupSetting,
  InboundMessage,
  OutboundMessage,
  ParticipantAction,
  ParticipantResult,
} from '../../core/connector.js';
import type { EventName } from '../../core/event-catalog.js';
import { invalidInput, notFound } from '../../core/errors.js';
import type { Logger } from '../../platform/logger.js';
import { setMentions } from '../../messages/group-mentions.js';
import { accountForms, isLidAddress, parseUserAddress, sandboxLid } from './addresses.js';
import type { MemberRole, SandboxGroup, SandboxGroupStore } from './group-store.js';
import type { SandboxPictureStore } from './picture-store.js';
import type { InstanceLookup, LinkedParty } from './router.js';
import type { SandboxDelivery } from './delivery.js';

export interface SandboxGroupsDeps {
  store: SandboxGroupStore;
  host: ConnectorHost;
  lookup: InstanceLookup;
  /** Hands things to member instances: here when live here, by letter when live on another node of the fleet. */
  delivery: SandboxDelivery;
  pictures: Pick<SandboxPictureStore, 'save' | 'remove' | 'urlOf'>;
  /** The phone address of a sandbox account's @lid one, null when no account has it. */
  phoneOfLid: (lid: string) => string | null;
  logger: Logger;
}

const inviteAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const nowSeconds = () => Math.floor(Date.now() / 1000);

function newInviteCode(): string {
  let code = '';
  for (let i = 0; i < 22; i++) code += inviteAlphabet[randomInt(inviteAlphabet.length)];
  return code;
}

/** A group address as WhatsApp gives new groups: 120363 and twelve more digits. */
function newGroupJid(): string {
  let digits = '120363';
  for (let i = 0; i < 12; i++) digits += String(randomInt(10));
  return `${digits}@g.us`;
}

const isAdmin = (role: MemberRole | undefined) => role === 'admin' || role === 'superadmin';

/** WhatsApp's refusal, as the API answers it (a 400 naming what WhatsApp said). */
function refused(text: string, code: 'not-authorized' | 'forbidden'): Error {
  return invalidInput(`${text} (WhatsApp refused: ${code})`);
}

export class SandboxGroups {
  /** Changes run one at a time, so two changes of one group never interleave. */
  private changing: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: SandboxGroupsDeps) {}

  /** Creates a group owned by `actor` with `participants` (phone or @lid addresses, sandbox accounts or not). */
  create(actor: LinkedParty, subject: string, participants: string[]): Promise<GroupMetadata> {
    return this.serialized(async () => {
      const groups = await this.deps.store.groups();
      let jid = newGroupJid();
      while (groups.has(jid)) jid = newGroupJid();
      const now = nowSeconds();
      const members = new Map<string, MemberRole>([[actor.ownerJid, 'superadmin']]);
      for (const participant of participants) {
        const phone = this.phoneOf(participant);
        if (!accountForms(phone).some((form) => members.has(form))) members.set(phone, 'member');
      }
      const group: SandboxGroup = {
        jid,
        subject,
        subjectOwner: actor.ownerJid,
        subjectTime: now,
        description: null,
        descId: null,
        descOwner: null,
        descTime: null,
        pictureFile: null,
        owner: actor.ownerJid,
        creation: now,
        announce: false,
        locked: false,
        ephemeral: 0,
        inviteCode: newInviteCode(),
        members,
      };
      await this.deps.store.insert(group);
      const metadata = this.metadataOf(group);
      await this.notify(group, 'GROUPS_UPSERT', [{ ...metadata, ...authorOf(actor) }]);
      return metadata;
    });
  }

  /** The group as `viewer` sees it: a member only (WhatsApp refuses others). */
  async metadata(viewer: LinkedParty, jid: string): Promise<GroupMetadata> {
    const group = await this.group(jid);
    this.asMember(group, viewer);
    return this.metadataOf(group);
  }

  async participating(viewer: LinkedParty): Promise<GroupMetadata[]> {
    const groups = [...(await this.deps.store.groups()).values()];
    return groups.filter((group) => memberKey(group, viewer.ownerJid) !== null).map((group) => this.metadataOf(group));
  }

  async pictureUrl(jid: string): Promise<string | null> {
    const group = await this.deps.store.get(jid);
    return group?.pictureFile ? this.deps.pictures.urlOf(group.pictureFile) : null;
  }

  updateSubject(actor: LinkedParty, jid: string, subject: string): Promise<void> {
    return this.changeInfo(actor, jid, 'subject', (group) => {
      group.subject = subject;
      group.subjectOwner = actor.ownerJid;
      group.subjectTime = nowSeconds();
      return { subject };
    });
  }

  updateDescription(actor: LinkedParty, jid: string, description: string): Promise<void> {
    return this.changeInfo(actor, jid, 'description', (group) => {
      const now = nowSeconds();
      group.description = description === '' ? null : description;
      group.descId = `${now}${randomInt(1000, 9999)}`;
      group.descOwner = actor.ownerJid;
      group.descTime = now;
      return { desc: group.description, descId: group.descId };
    });
  }

  async updatePicture(actor: LinkedParty, jid: string, jpeg: Buffer): Promise<void> {
    const fileName = await this.deps.pictures.save(jpeg);
    let previous: string | null = null;
    try {
      await this.changeInfo(actor, jid, 'picture', (group) => {
        previous = group.pictureFile;
        group.pictureFile = fileName;
        return { pictureUrl: this.deps.pictures.urlOf(fileName) };
      });
    } catch (error) {
      await this.deps.pictures.remove(fileName);
      throw error;
    }
    if (previous) await this.deps.pictures.remove(previous);
  }

  /** Only admins see the invite code. */
  async inviteCode(actor: LinkedParty, jid: string): Promise<string> {
    const group = await this.group(jid);
    this.asAdmin(group, actor, 'see its invite link');
    return group.inviteCode;
  }

  revokeInvite(actor: LinkedParty, jid: string): Promise<string> {
    return this.serialized(async () => {
      const group = await this.group(jid);
      this.asAdmin(group, actor, 'reset its invite link');
      group.inviteCode = newInviteCode();
      await this.deps.store.saveInfo(group);
      await this.notify(group, 'GROUP_UPDATE', [{ id: group.jid, inviteCode: group.inviteCode, ...authorOf(actor) }]);
      return group.inviteCode;
    });
  }

  async inviteInfo(code: string): Promise<GroupMetadata> {
    const group = await this.deps.store.byInviteCode(code);
    if (!group) throw notFound(`invite code ${code} leads to no group: it is wrong, or it was reset (revokeInviteCode)`);
    return this.metadataOf(group);
  }

  /** Joins the group of `code`; an account already in it stays as it is. */
  acceptInvite(actor: LinkedParty, code: string): Promise<string> {
    return this.serialized(async () => {
      const group = await this.deps.store.byInviteCode(code);
      if (!group) throw notFound(`invite code ${code} leads to no group: it is wrong, or it was reset (revokeInviteCode)`);
      if (memberKey(group, actor.ownerJid) !== null) return group.jid;
      await this.deps.store.saveMembers(group, [{ jid: actor.ownerJid, role: 'member' }], []);
      await this.notifyAccounts([actor.ownerJid], 'GROUPS_UPSERT', [{ ...this.metadataOf(group), ...authorOf(actor) }]);
      await this.notify(group, 'GROUP_PARTICIPANTS_UPDATE', participantsEvent(group, actor, [actor.ownerJid], 'add'));
      return group.jid;
    });
  }

  /** Admins add, remove, promote and demote; each participant gets WhatsApp's status ("200", "404", "409"…). */
  updateParticipants(actor: LinkedParty, jid: string, participants: string[], action: ParticipantAction): Promise<ParticipantResult[]> {
    return this.serialized(async () => {
      const group = await this.group(jid);
      this.asAdmin(group, actor, `${action} participants`);
      const results: ParticipantResult[] = [];
      const changed: { jid: string; role: MemberRole }[] = [];
      const removed: string[] = [];
      for (const participant of participants) {
        const phone = this.phoneOf(participant);
        const key = memberKey(group, phone);
        const status = outcome(action, key === null ? undefined : group.members.get(key));
        results.push({
          status,
          jid: key ?? phone,
          content: { tag: 'participant', attrs: { jid: key ?? phone, ...(status !== '200' ? { error: status } : {}) } },
        });
        if (status !== '200') continue;
        if (action === 'add') changed.push({ jid: phone, role: 'member' });
        else if (action === 'remove' && key !== null) removed.push(key);
        else if (key !== null) changed.push({ jid: key, role: action === 'promote' ? 'admin' : 'member' });
      }
      const touched = [...changed.map((c) => c.jid), ...removed];
      if (touched.length === 0) return results;
      await this.deps.store.saveMembers(group, changed, removed);
      if (action === 'add') await this.notifyAccounts(touched, 'GROUPS_UPSERT', [{ ...this.metadataOf(group), ...authorOf(actor) }]);
      await this.notify(group, 'GROUP_PARTICIPANTS_UPDATE', participantsEvent(group, actor, touched, action), removed);
      return results;
    });
  }

  /** Admins only: announcement (only admins send) and locked (only admins edit the info). */
  updateSetting(actor: LinkedParty, jid: string, setting: GroupSetting): Promise<void> {
    return this.serialized(async () => {
      const group = await this.group(jid);
      this.asAdmin(group, actor, 'change its settings');
      const change: Record<string, boolean> = {};
      if (setting === 'announcement' || setting === 'not_announcement') {
        group.announce = setting === 'announcement';
        change.announce = group.announce;
      } else {
        group.locked = setting === 'locked';
        change.restrict = group.locked;
      }
      await this.deps.store.saveInfo(group);
      await this.notify(group, 'GROUP_UPDATE', [{ id: group.jid, ...change, ...authorOf(actor) }]);
    });
  }

  toggleEphemeral(actor: LinkedParty, jid: string, expiration: number): Promise<void> {
    return this.changeInfo(actor, jid, 'disappearing messages', (group) => {
      group.ephemeral = expiration;
      return { ephemeralDuration: expiration };
    });
  }

  /** The member leaves; a group left without an admin gets its longest member as one (as WhatsApp does). */
  leave(actor: LinkedParty, jid: string): Promise<void> {
    return this.serialized(async () => {
      const group = await this.group(jid);
      const key = memberKey(group, actor.ownerJid);
      if (key === null) throw refused(`this account is not a participant of group ${jid}`, 'forbidden');
      await this.deps.store.saveMembers(group, [], [key]);
      await this.notify(group, 'GROUP_PARTICIPANTS_UPDATE', participantsEvent(group, actor, [key], 'remove'), [key]);
      const [successor] = group.members.keys();
      if (successor !== undefined && ![...group.members.values()].some(isAdmin)) {
        await this.deps.store.saveMembers(group, [{ jid: successor, role: 'admin' }], []);
        await this.notify(group, 'GROUP_PARTICIPANTS_UPDATE', participantsEvent(group, actor, [successor], 'promote'));
      }
    });
  }

  /** Why `sender` may not write to group `jid` now, or null when it may (for a send accepted before it is queued). */
  async refusalFor(sender: LinkedParty, jid: string): Promise<string | null> {
    const group = await this.deps.store.get(jid);
    if (!group) return `group ${jid} does not exist on the sandbox network`;
    const key = memberKey(group, sender.ownerJid);
    if (key === null) return `this account is not a participant of group ${jid} (WhatsApp refused: forbidden)`;
    if (group.announce && !isAdmin(group.members.get(key))) {
      return `only admins can send messages to group ${jid} (announcement mode; WhatsApp refused: not-authorized)`;
    }
    return null;
  }

  /**
   * A message to a group: every other member that is a live sandbox instance (on this node or another) receives it
   * with the sender as `participant`; the sender gets DELIVERY_ACK once one did. A group that does not let the sender
   * write refuses it.
   */
  async deliver(sender: LinkedParty, message: OutboundMessage): Promise<void> {
    const refusal = await this.refusalFor(sender, message.remoteJid);
    if (refusal !== null) throw new Error(refusal);
    const group = (await this.deps.store.get(message.remoteJid)) as SandboxGroup;
    const content = structuredClone(message.content);
    if (message.mentionsEveryOne) setMentions(content, [...group.members.keys()]);
    const inbound: InboundMessage = {
      keyId: message.keyId,
      remoteJid: group.jid,
      fromMe: false,
      participant: sender.ownerJid,
      participantAlt: sandboxLid(sender.ownerJid),
      pushName: sender.profileName,
      messageType: message.messageType,
      content,
      timestamp: nowSeconds(),
    };
    // Handed to every member before anything awaits (the messages of one batch keep their order).
    const handed = this.instancesOf([...group.members.keys()], sender.instanceId).map((instanceId) => {
      // An instance that ignores groups has the message (its phone does) but reports nothing, as upstream.
      const ignores = this.deps.lookup.byId(instanceId)?.settings.groupsIgnore;
      return this.deps.delivery.hand(instanceId, ignores ? null : { kind: 'received', message: structuredClone(inbound) }, 'skip');
    });
    if ((await Promise.all(handed)).some(Boolean)) await this.deps.host.messageStatus(sender.instanceId, message.keyId, 'DELIVERY_ACK');
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.changing.then(work, work);
    this.changing = run.catch(() => undefined);
    return run;
  }

  /** A change of the group's info: any member, or only admins when the group is locked. */
  private changeInfo(actor: LinkedParty, jid: string, what: string, apply: (group: SandboxGroup) => Record<string, unknown>): Promise<void> {
    return this.serialized(async () => {
      const group = await this.group(jid);
      const key = this.asMember(group, actor);
      if (group.locked && !isAdmin(group.members.get(key))) {
        throw refused(`only admins can change the ${what} of group ${jid} (the group is locked)`, 'not-authorized');
      }
      const change = apply(group);
      await this.deps.store.saveInfo(group);
      await this.notify(group, 'GROUP_UPDATE', [{ id: group.jid, ...change, ...authorOf(actor) }]);
    });
  }

  private async group(jid: string): Promise<SandboxGroup> {
    const group = await this.deps.store.get(jid);
    if (!group) throw notFound(`group ${jid} was not found on the sandbox network`);
    return group;
  }

  /** The actor's member key; a non-member is refused. */
  private asMember(group: SandboxGroup, actor: LinkedParty): string {
    const key = memberKey(group, actor.ownerJid);
    if (key === null) throw refused(`this account is not a participant of group ${group.jid}`, 'forbidden');
    return key;
  }

  private asAdmin(group: SandboxGroup, actor: LinkedParty, what: string): void {
    const key = this.asMember(group, actor);
    if (!isAdmin(group.members.get(key))) throw refused(`only admins of group ${group.jid} can ${what}`, 'not-authorized');
  }

  /** The phone address of a participant given as a number, a phone address or a sandbox account's @lid address. */
  private phoneOf(participant: string): string {
    if (isLidAddress(participant)) {
      const phone = this.deps.phoneOfLid(participant);
      if (phone === null) throw invalidInput(`${participant} is an @lid address of no sandbox account; give the phone number`);
      return phone;
    }
    const phone = parseUserAddress(participant);
    if (phone === null) throw invalidInput(`${participant} is not a phone number or a person's address`);
    return phone;
  }

  private metadataOf(group: SandboxGroup): GroupMetadata {
    return {
      id: group.jid,
      addressingMode: 'pn',
      subject: group.subject,
      subjectOwner: group.subjectOwner,
      subjectTime: group.subjectTime,
      size: group.members.size,
      creation: group.creation,
      owner: group.owner,
      ...(group.description !== null
        ? { desc: group.description, descId: group.descId ?? undefined, descOwner: group.descOwner ?? undefined, descTime: group.descTime ?? undefined }
        : {}),
      restrict: group.locked,
      announce: group.announce,
      isCommunity: false,
      isCommunityAnnounce: false,
      joinApprovalMode: false,
      memberAddMode: false,
      participants: [...group.members].map(([jid, role]) => this.participantOf(jid, role)),
      ...(group.ephemeral > 0 ? { ephemeralDuration: group.ephemeral } : {}),
    };
  }

  private participantOf(jid: string, role: MemberRole | null): GroupParticipant {
    return { id: jid, lid: sandboxLid(jid), admin: adminOf(role) };
  }

  /** Emits `event` to every member's instance (and to the accounts in `also`, e.g. those just removed). */
  private notify(group: SandboxGroup, event: EventName, data: unknown, also: string[] = []): Promise<void> {
    return this.notifyAccounts([...group.members.keys(), ...also], event, data);
  }

  private async notifyAccounts(accounts: string[], event: EventName, data: unknown): Promise<void> {
    for (const instanceId of this.instancesOf(accounts)) {
      const instance = this.deps.lookup.byId(instanceId);
      // As upstream: an instance that ignores groups gets no group events.
      if (!instance || instance.settings.groupsIgnore) continue;
      await this.deps.delivery.hand(instanceId, { kind: 'event', event, data }, 'host');
    }
  }

  /** The linked sandbox instances holding these accounts (each once), but `except`. */
  private instancesOf(accounts: string[], except?: string): string[] {
    const ids = new Set<string>();
    for (const account of accounts) {
      for (const form of accountForms(account)) {
        const instance = this.deps.lookup.byOwnerJid(form);
        if (instance && instance.id !== except) ids.add(instance.id);
      }
    }
    return [...ids];
  }
}

/** The member key under which the account at `address` (any spelling of it) is in the group, or null. */
function memberKey(group: SandboxGroup, address: string): string | null {
  return accountForms(address).find((form) => group.members.has(form)) ?? null;
}

/** WhatsApp's status for one participant of a change: 200 done, 404 not a member, 409 already one, 403 not allowed. */
function outcome(action: ParticipantAction, role: MemberRole | undefined): string {
  if (action === 'add') return role === undefined ? '200' : '409';
  if (role === undefined) return '404';
  if (role === 'superadmin' && action !== 'promote') return '403';
  return '200';
}

const adminOf = (role: MemberRole | null | undefined) => (role === 'superadmin' || role === 'admin' ? role : null);

/**
 * GROUP_PARTICIPANTS_UPDATE as the WhatsApp Web connector reports it: the actor's phone address as `author` (its @lid
 * one as `authorAlt`), the participants' phone addresses, and `participantsData` with each one's addresses and rank.
 */
function participantsEvent(group: SandboxGroup, actor: LinkedParty, members: string[], action: ParticipantAction) {
  return {
    id: group.jid,
    author: actor.ownerJid,
    authorAlt: sandboxLid(actor.ownerJid),
    participants: members,
    action,
    participantsData: members.map((jid) => ({ jid, phoneNumber: jid, lid: sandboxLid(jid), admin: adminOf(group.members.get(jid)) })),
  };
}

function authorOf(actor: LinkedParty): { author: string; authorPn: string } {
  return { author: sandboxLid(actor.ownerJid), authorPn: actor.ownerJid };
}
