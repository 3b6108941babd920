// The sandbox's groups in the store, read into memory once (again when another node changed them), so routing a group
// message asks no query.
import type { Db } from '../../platform/store/db.js';
import { sharedCache, type FleetSignals } from './shared-cache.js';
import type { Database } from '../../platform/store/schema.js';

export type MemberRole = 'superadmin' | 'admin' | 'member';

/** A group of the sandbox network; times in seconds. */
export interface SandboxGroup {
  jid: string;
  subject: string;
  subjectOwner: string;
  subjectTime: number;
  description: string | null;
  descId: string | null;
  descOwner: string | null;
  descTime: number | null;
  pictureFile: string | null;
  owner: string;
  creation: number;
  announce: boolean;
  locked: boolean;
  ephemeral: number;
  inviteCode: string;
  /** Members by phone address, in the order they joined. */
  members: Map<string, MemberRole>;
}

/** The group's info as its table row (the members apart). */
type GroupRow = Database['sandbox_groups'];

function rowOf(group: SandboxGroup): GroupRow {
  return {
    jid: group.jid,
    subject: group.subject,
    subject_owner: group.subjectOwner,
    subject_time: group.subjectTime,
    description: group.description,
    desc_id: group.descId,
    desc_owner: group.descOwner,
    desc_time: group.descTime,
    picture_file: group.pictureFile,
    owner_jid: group.owner,
    creation: group.creation,
    announce: group.announce ? 1 : 0,
    locked: group.locked ? 1 : 0,
    ephemeral: group.ephemeral,
    invite_code: group.inviteCode,
    updated_at: Date.now(),
  };
}

function groupOf(row: GroupRow): SandboxGroup {
  return {
    jid: row.jid,
    subject: row.subject,
    subjectOwner: row.subject_owner,
    subjectTime: Number(row.subject_time),
    description: row.description,
    descId: row.desc_id,
    descOwner: row.desc_owner,
    descTime: row.desc_time === null ? null : Number(row.desc_time),
    pictureFile: row.picture_file,
    owner: row.owner_jid,
    creation: Number(row.creation),
    announce: Number(row.announce) === 1,
    locked: Number(row.locked) === 1,
    ephemeral: Number(row.ephemeral),
    inviteCode: row.invite_code,
    members: new Map(),
  };
}

export class SandboxGroupStore {
  private byJid: Map<string, SandboxGroup> | null = null;
  private loading: Promise<Map<string, SandboxGroup>> | null = null;
  /** Raised when another node changed the groups: a read begun before that is not kept. */
  private generation = 0;
  private readonly changed: () => Promise<void>;

  constructor(
    private readonly db: Db,
    fleet?: FleetSignals,
  ) {
    this.changed = sharedCache(fleet, 'sandbox-groups', () => {
      this.generation++;
      this.byJid = null;
      this.loading = null;
    });
  }

  /** Every group, read from the store on first use. */
  async groups(): Promise<Map<string, SandboxGroup>> {
    if (this.byJid) return this.byJid;
    this.loading ??= this.load();
    return this.loading;
  }

  /** The groups if already read (for a synchronous look), else null. */
  loaded(): Map<string, SandboxGroup> | null {
    return this.byJid;
  }

  async get(jid: string): Promise<SandboxGroup | undefined> {
    return (await this.groups()).get(jid);
  }

  async byInviteCode(code: string): Promise<SandboxGroup | undefined> {
    for (const group of (await this.groups()).values()) if (group.inviteCode === code) return group;
    return undefined;
  }

  /** Stores a new group with its members. */
  async insert(group: SandboxGroup): Promise<void> {
    const groups = await this.groups();
    const now = Date.now();
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('sandbox_groups').values(rowOf(group)).execute();
      const members = [...group.members].map(([jid, role]) => ({ group_jid: group.jid, jid, role, added_at: now }));
      if (members.length > 0) await tx.insertInto('sandbox_group_members').values(members).execute();
    });
    groups.set(group.jid, group);
    await this.changed();
  }

  /** Writes the group's info (subject, description, picture, settings, invite code) as it is now. */
  async saveInfo(group: SandboxGroup): Promise<void> {
    const { jid: _jid, ...row } = rowOf(group);
    await this.db.updateTable('sandbox_groups').set(row).where('jid', '=', group.jid).execute();
    await this.changed();
  }

  /** Sets members' roles (adding those not yet members) and removes `removed`, in one transaction. */
  async saveMembers(group: SandboxGroup, changed: { jid: string; role: MemberRole }[], removed: string[]): Promise<void> {
    const now = Date.now();
    await this.db.transaction().execute(async (tx) => {
      for (const { jid, role } of changed) {
        await tx
          .insertInto('sandbox_group_members')
          .values({ group_jid: group.jid, jid, role, added_at: now })
          .onConflict((oc) => oc.columns(['group_jid', 'jid']).doUpdateSet({ role }))
          .execute();
      }
      if (removed.length > 0) {
        await tx.deleteFrom('sandbox_group_members').where('group_jid', '=', group.jid).where('jid', 'in', removed).execute();
      }
    });
    for (const { jid, role } of changed) group.members.set(jid, role);
    for (const jid of removed) group.members.delete(jid);
    await this.changed();
  }

  private async load(): Promise<Map<string, SandboxGroup>> {
    const generation = this.generation;
    const rows = await this.db.selectFrom('sandbox_groups').selectAll().execute();
    const members = await this.db.selectFrom('sandbox_group_members').selectAll().orderBy('added_at').orderBy('jid').execute();
    const map = new Map<string, SandboxGroup>();
    for (const row of rows) map.set(row.jid, groupOf(row));
    for (const member of members) map.get(member.group_jid)?.members.set(member.jid, member.role);
    if (generation === this.generation) this.byJid = map;
    return map;
  }
}
