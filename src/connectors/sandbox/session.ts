// The session a linked sandbox instance keeps in the store: its owner address and profile name.
import { parseUserAddress } from './addresses.js';

export interface SandboxSession {
  ownerJid: string;
  profileName: string;
}

/** The stored session when it has the sandbox shape, else null (treated as not linked). */
export function readSession(data: Record<string, unknown> | null): SandboxSession | null {
  if (!data) return null;
  const { ownerJid, profileName } = data;
  if (typeof ownerJid !== 'string' || parseUserAddress(ownerJid) !== ownerJid) return null;
  if (typeof profileName !== 'string') return null;
  return { ownerJid, profileName };
}

export function sessionData(session: SandboxSession): Record<string, unknown> {
  return { ownerJid: session.ownerJid, profileName: session.profileName };
}
