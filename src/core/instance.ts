// The instance as the service sees it: identity, integration kind, link state and behaviour settings.
import type { PacingChoice } from './pacing.js';

/** The name of a registered connector kind (`WHATSAPP-BAILEYS`, `SANDBOX`…): the kinds list says which exist. */
export type Integration = string;

export type ConnectionState = 'open' | 'connecting' | 'close';

export interface Settings {
  rejectCall: boolean;
  msgCall: string;
  groupsIgnore: boolean;
  alwaysOnline: boolean;
  readMessages: boolean;
  readStatus: boolean;
  syncFullHistory: boolean;
}

export const defaultSettings: Settings = {
  rejectCall: false,
  msgCall: '',
  groupsIgnore: false,
  alwaysOnline: false,
  readMessages: false,
  readStatus: false,
  syncFullHistory: false,
};

/** WhatsApp's privacy settings and the values each accepts (group adds cannot be refused to everyone). */
export const privacyValues = {
  readreceipts: ['all', 'none'],
  profile: ['all', 'contacts', 'contact_blacklist', 'none'],
  status: ['all', 'contacts', 'contact_blacklist', 'none'],
  online: ['all', 'match_last_seen'],
  last: ['all', 'contacts', 'contact_blacklist', 'none'],
  groupadd: ['all', 'contacts', 'contact_blacklist'],
} as const;

export type PrivacySettings = Record<keyof typeof privacyValues, string>;

export interface Instance {
  id: string;
  name: string;
  integration: Integration;
  status: ConnectionState;
  ownerJid: string | null;
  profileName: string | null;
  profilePicUrl: string | null;
  profileStatus: string | null;
  number: string | null;
  businessId: string | null;
  apikeyHash: string;
  settings: Settings;
  privacy: PrivacySettings | null;
  createdAt: number;
  /** The pacing fields the instance set for itself (none: the service's defaults). */
  pacing?: PacingChoice;
}

/** The settings with the fields a request gives replacing the current ones. */
export function mergeSettings(current: Settings, changes: Partial<Settings>): Settings {
  const next = { ...current };
  for (const key of Object.keys(current) as (keyof Settings)[]) {
    const value = changes[key];
    if (value !== undefined) (next as Record<keyof Settings, unknown>)[key] = value;
  }
  return next;
}

/** Settings in the snake_case form responses use. */
export function settingsSnake(settings: Settings, withMsgCall = true) {
  return {
    reject_call: settings.rejectCall,
    ...(withMsgCall ? { msg_call: settings.msgCall } : {}),
    groups_ignore: settings.groupsIgnore,
    always_online: settings.alwaysOnline,
    read_messages: settings.readMessages,
    read_status: settings.readStatus,
    sync_full_history: settings.syncFullHistory,
  };
}

const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Returns what is wrong with an instance name, or null when it is valid. */
export function instanceNameProblem(name: string): string | null {
  if (name.length === 0) return 'instanceName must not be empty';
  if (name.length > 64) return 'instanceName must be at most 64 characters';
  if (!namePattern.test(name)) {
    return 'instanceName may contain only letters, digits, "-", "_" and "." and must start with a letter or a digit';
  }
  return null;
}
