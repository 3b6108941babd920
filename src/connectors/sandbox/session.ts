// The session a linked sandbox instance keeps in the store: its owner address and profile (name, about, picture).
import { parseUserAddress } from './addresses.js';

export interface SandboxSession {
  ownerJid: string;
  profileName: string;
  /** The "about" text and when it was set (ISO date); absent until set through updateProfileStatus. */
  profileStatus?: string;
  statusSetAt?: string;
  /** The profile picture's file in the sandbox picture store; absent when the account has none. */
  pictureFile?: string;
}

/** The stored session when it has the sandbox shape, else null (treated as not linked). */
export function readSession(data: Record<string, unknown> | null): SandboxSession | null {
  if (!data) return null;
  const { ownerJid, profileName, profileStatus, statusSetAt, pictureFile } = data;
  if (typeof ownerJid !== 'string' || parseUserAddress(ownerJid) !== ownerJid) return null;
  if (typeof profileName !== 'string') return null;
  return {
    ownerJid,
    profileName,
    ...(typeof profileStatus === 'string' ? { profileStatus } : {}),
    ...(typeof statusSetAt === 'string' ? { statusSetAt } : {}),
    ...(typeof pictureFile === 'string' ? { pictureFile } : {}),
  };
}

export function sessionData(session: SandboxSession): Record<string, unknown> {
  return { ...session };
}
