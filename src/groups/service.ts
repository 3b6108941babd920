// Group use cases: creating and administering groups, invites, participants and settings, through the connector.
import type { Connector, GroupMetadata, GroupSetting, GroupsModule, ParticipantAction, ParticipantResult } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import { CodedError, invalidInput } from '../core/errors.js';
import type { Instance } from '../core/instance.js';
import { loadMedia } from '../media/load.js';
import { profilePicture } from '../media/profile-picture.js';
import { groupJid, inviteLinkPrefix, peopleOf } from './addresses.js';
import { groupSummary } from './presenters.js';

export interface GroupOperationsDeps {
  /** The instance's connector (created when it has none yet). */
  connectorOf(instance: Instance): Connector;
  kinds: Pick<ConnectorKinds, 'assertCan'>;
  /** How a picture given as a URL is fetched (the guarded media fetcher), and the largest taken. */
  media: { maxBytes: number; denyPrivate: boolean; fetchTimeoutMs: number };
  /** Queues a text message from the instance (the send routes' path: stored, announced, delivered in order). */
  sendText(instance: Instance, number: string, text: string): Promise<unknown>;
}

export interface CreateGroupInput {
  subject: string;
  participants: string[];
  description?: string;
  promoteParticipants?: boolean;
}

const maxSubjectLength = 100;
const maxDescriptionLength = 2048;

export class GroupOperations {
  constructor(private readonly deps: GroupOperationsDeps) {}

  /** Creates the group, then sets its description and promotes its participants when asked; answers its metadata. */
  async create(instance: Instance, input: CreateGroupInput): Promise<GroupMetadata> {
    const subject = checkedSubject(input.subject);
    const description = input.description === undefined ? undefined : checkedDescription(input.description);
    const participants = peopleOf(input.participants, 'participants');
    const groups = this.groups(instance, 'creating a group');
    const created = await groups.create(subject, participants);
    await afterCreation(created.id, async () => {
      if (description !== undefined && description !== '') await groups.updateDescription(created.id, description);
      const members = created.participants.filter((p) => p.admin === null).map((p) => p.id);
      if (input.promoteParticipants && members.length > 0) await groups.updateParticipants(created.id, members, 'promote');
    });
    return groups.metadata(created.id);
  }

  async updateSubject(instance: Instance, jid: string, subject: string): Promise<void> {
    await this.groups(instance, 'changing a group subject').updateSubject(jid, checkedSubject(subject));
  }

  async updateDescription(instance: Instance, jid: string, description: string): Promise<void> {
    await this.groups(instance, 'changing a group description').updateDescription(jid, checkedDescription(description));
  }

  /** Sets the group's picture from a URL or base64 image (cropped square, as a JPEG). */
  async updatePicture(instance: Instance, jid: string, image: string): Promise<void> {
    const groups = this.groups(instance, 'changing a group picture');
    if (image.trim() === '') throw invalidInput('image is required: an image URL or base64');
    const { maxBytes, denyPrivate, fetchTimeoutMs } = this.deps.media;
    const loaded = await loadMedia(image, { maxBytes, denyPrivate, timeoutMs: fetchTimeoutMs, field: 'image' });
    await groups.updatePicture(jid, await profilePicture(loaded.bytes, 'image'));
  }

  async inviteCode(instance: Instance, jid: string): Promise<{ inviteUrl: string; inviteCode: string }> {
    const code = await this.groups(instance, 'reading an invite code').inviteCode(jid);
    return { inviteUrl: inviteLinkPrefix + code, inviteCode: code };
  }

  async revokeInviteCode(instance: Instance, jid: string): Promise<{ revoked: true; inviteCode: string }> {
    const code = await this.groups(instance, 'revoking an invite code').revokeInvite(jid);
    return { revoked: true, inviteCode: code };
  }

  /**
   * Sends the group's invite link to each number (`description`, a blank line, the link) as queued text messages;
   * every number is checked before anything is sent, so a bad one sends nothing.
   */
  async sendInvite(instance: Instance, input: { groupJid: string; description: string; numbers: string[] }): Promise<{ send: true; inviteUrl: string }> {
    const jid = groupJid(input.groupJid.trim(), 'groupJid', false);
    const recipients = peopleOf(input.numbers, 'numbers');
    const { inviteUrl } = await this.inviteCode(instance, jid);
    const text = input.description === '' ? inviteUrl : `${input.description}\n\n${inviteUrl}`;
    for (const recipient of recipients) await this.deps.sendText(instance, recipient, text);
    return { send: true, inviteUrl };
  }

  inviteInfo(instance: Instance, code: string): Promise<GroupMetadata> {
    return this.groups(instance, 'reading an invite').inviteInfo(code);
  }

  async acceptInvite(instance: Instance, code: string): Promise<{ accepted: true; groupJid: string }> {
    const jid = await this.groups(instance, 'joining a group').acceptInvite(code);
    return { accepted: true, groupJid: jid };
  }

  async findGroupInfos(instance: Instance, jid: string) {
    const groups = this.groups(instance, 'reading a group');
    const metadata = await groups.metadata(jid);
    return groupSummary(metadata, await groups.pictureUrl(jid).catch(() => null), true);
  }

  /** Every group of the account, each with its picture URL (and participants when asked). */
  async fetchAll(instance: Instance, getParticipants: string | undefined) {
    if (getParticipants === undefined || getParticipants === '') throw invalidInput('The getParticipants needs to be informed in the query');
    const groups = this.groups(instance, 'listing groups');
    const all = await groups.participating();
    const withParticipants = getParticipants === 'true';
    return Promise.all(all.map(async (metadata) => groupSummary(metadata, await groups.pictureUrl(metadata.id).catch(() => null), withParticipants)));
  }

  async participants(instance: Instance, jid: string) {
    const metadata = await this.groups(instance, 'listing participants').metadata(jid);
    return { participants: metadata.participants };
  }

  async updateParticipants(instance: Instance, jid: string, action: ParticipantAction, people: string[]): Promise<{ updateParticipants: ParticipantResult[] }> {
    const participants = peopleOf(people, 'participants');
    return { updateParticipants: await this.groups(instance, 'changing participants').updateParticipants(jid, participants, action) };
  }

  async updateSetting(instance: Instance, jid: string, setting: GroupSetting): Promise<Record<string, never>> {
    await this.groups(instance, 'changing a group setting').updateSetting(jid, setting);
    return {};
  }

  async toggleEphemeral(instance: Instance, jid: string, expiration: number): Promise<{ success: true }> {
    await this.groups(instance, 'changing disappearing messages').toggleEphemeral(jid, expiration);
    return { success: true };
  }

  async leave(instance: Instance, jid: string): Promise<{ groupJid: string; leave: true }> {
    await this.groups(instance, 'leaving a group').leave(jid);
    return { groupJid: jid, leave: true };
  }

  /** The instance's groups module: its kind must have one ("Method not available" else) and it must be linked. */
  private groups(instance: Instance, what: string): GroupsModule {
    this.deps.kinds.assertCan(instance, 'groups');
    const connector = this.deps.connectorOf(instance);
    if (!connector.groups) throw invalidInput(`instance "${instance.name}" cannot do groups`);
    if (connector.state() !== 'open') {
      throw invalidInput(`instance "${instance.name}" is not connected (state ${connector.state()}); ${what} needs a linked instance`);
    }
    return connector.groups;
  }
}

/** A step after the group exists: its failure says that the group was created all the same. */
async function afterCreation(jid: string, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (error) {
    if (!(error instanceof CodedError)) throw error;
    throw new CodedError(error.code, [`group ${jid} was created, but a step after it failed`, ...error.messages]);
  }
}

function checkedSubject(subject: string): string {
  const trimmed = subject.trim();
  if (trimmed === '') throw invalidInput('subject must not be empty');
  if (trimmed.length > maxSubjectLength) throw invalidInput(`subject must be at most ${maxSubjectLength} characters (WhatsApp's limit)`);
  return trimmed;
}

function checkedDescription(description: string): string {
  if (description.length > maxDescriptionLength) throw invalidInput(`description must be at most ${maxDescriptionLength} characters (WhatsApp's limit)`);
  return description;
}
