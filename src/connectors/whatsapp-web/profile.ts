// Profiles through the socket: pictures, a profile as others see it, the own name and "about", privacy as WhatsApp has it.
import type { ProfileInfo, ProfileModule } from '../../core/connector.js';
import type { privacyValues, PrivacySettings } from '../../core/instance.js';
import type { WaSocket } from './socket.js';
import { checkNumbers, noKnownAddresses } from './contacts.js';

/** A picture that cannot be had (none, privacy, not on WhatsApp) is null, never an error. */
async function pictureOf(socket: WaSocket, jid: string): Promise<string | null> {
  try {
    return (await socket.profilePictureUrl(jid, 'image')) ?? null;
  } catch {
    return null;
  }
}

/** The "about" of `jid` as `{status, setAt}` (ISO date), null when it cannot be read. */
async function statusOf(socket: WaSocket, jid: string): Promise<ProfileInfo['status']> {
  try {
    const [entry] = (await socket.fetchStatus(jid)) ?? [];
    const found = entry?.status as { status?: string | null; setAt?: Date } | undefined;
    if (!found) return null;
    return { status: found.status ?? null, setAt: found.setAt instanceof Date ? found.setAt.toISOString() : null };
  } catch {
    return null;
  }
}

/** Other accounts' names are not kept by the connector (no contact store yet): `name` is null for them. */
export function profileModule(socket: () => WaSocket): ProfileModule {
  return {
    pictureUrl: (jid) => pictureOf(socket(), jid),
    fetch: async (jid) => {
      const live = socket();
      const own = live.user?.id.replace(/:\d+(?=@)/, '');
      if (jid !== own && !jid.endsWith('@g.us')) {
        // An account WhatsApp does not know has no profile (WhatsApp answers by its own spelling of the number).
        const [found] = await checkNumbers(live, noKnownAddresses, [{ number: jid, jid }]);
        if (!found?.exists) return null;
      }
      const [picture, status, business] = await Promise.all([pictureOf(live, jid), statusOf(live, jid), live.getBusinessProfile(jid).catch(() => undefined)]);
      const name = jid === own ? (live.user?.name ?? null) : null;
      return { name, picture, status, isBusiness: Boolean(business) };
    },
    setName: (name) => socket().updateProfileName(name),
    setStatus: (text) => socket().updateProfileStatus(text),
  };
}

/** The six privacy settings of WhatsApp's answer (Baileys caches it for the socket's life). */
export async function fetchPrivacy(socket: WaSocket): Promise<PrivacySettings> {
  const settings = await socket.fetchPrivacySettings(false);
  const pick = (field: keyof typeof privacyValues) => settings[field] ?? '';
  return {
    readreceipts: pick('readreceipts'),
    profile: pick('profile'),
    status: pick('status'),
    online: pick('online'),
    last: pick('last'),
    groupadd: pick('groupadd'),
  };
}
