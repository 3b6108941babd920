// Privacy settings: the six WhatsApp privacy updates, with the values each one accepts checked first.
import { privacyValues as values, type PrivacySettings } from '../../core/instance.js';
import type { WaSocket } from './socket.js';

type Field = keyof typeof values;

function checked<F extends Field>(settings: PrivacySettings, field: F): (typeof values)[F][number] {
  const value = settings[field];
  const allowed: readonly string[] = values[field];
  if (!allowed.includes(value)) throw new Error(`${field} must be one of: ${allowed.join(', ')}`);
  // Narrowed by the check above.
  return value as (typeof values)[F][number];
}

export async function applyPrivacy(socket: WaSocket, settings: PrivacySettings): Promise<void> {
  const wanted = {
    readreceipts: checked(settings, 'readreceipts'),
    profile: checked(settings, 'profile'),
    status: checked(settings, 'status'),
    online: checked(settings, 'online'),
    last: checked(settings, 'last'),
    groupadd: checked(settings, 'groupadd'),
  };
  await socket.updateReadReceiptsPrivacy(wanted.readreceipts);
  await socket.updateProfilePicturePrivacy(wanted.profile);
  await socket.updateStatusPrivacy(wanted.status);
  await socket.updateOnlinePrivacy(wanted.online);
  await socket.updateLastSeenPrivacy(wanted.last);
  await socket.updateGroupsAddPrivacy(wanted.groupadd);
}
