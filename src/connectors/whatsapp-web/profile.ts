// Profiles through the socket: pictures, a profile as others see it, the own name and "about", privacy as WhatsApp has it.
import { TransientConnectorError, type BusinessProfile, type ProfileInfo, type ProfileModule } from '../../core/connector.js';
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
    setPicture: async (jpeg) => {
      const live = socket();
      await live.updateProfilePicture(ownJid(live), jpeg);
    },
    removePicture: async () => {
      const live = socket();
      await live.removeProfilePicture(ownJid(live));
    },
    businessProfile: async (jid) => businessOf(await socket().getBusinessProfile(jid)),
  };
}

/** The account's own address without its device (`5511…:3@s.whatsapp.net` → `5511…@s.whatsapp.net`). */
function ownJid(socket: WaSocket): string {
  const id = socket.user?.id;
  if (!id) throw new TransientConnectorError('the WhatsApp connection has no own account yet');
  return id.replace(/:\d+(?=@)/, '');
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Baileys' business profile (nothing for an account that is not a business) in the answer's shape. */
function businessOf(found: unknown): BusinessProfile | null {
  if (typeof found !== 'object' || found === null) return null;
  const profile = found as Record<string, unknown>;
  const hours = typeof profile.business_hours === 'object' && profile.business_hours !== null ? (profile.business_hours as Record<string, unknown>) : {};
  const config = Array.isArray(hours.business_config) ? hours.business_config : Array.isArray(hours.config) ? hours.config : undefined;
  return {
    ...(text(profile.wid) ? { wid: text(profile.wid) } : {}),
    ...(text(profile.address) ? { address: text(profile.address) } : {}),
    description: text(profile.description) ?? '',
    website: Array.isArray(profile.website) ? profile.website.filter((site): site is string => typeof site === 'string') : [],
    ...(text(profile.email) ? { email: text(profile.email) } : {}),
    ...(text(profile.category) ? { category: text(profile.category) } : {}),
    business_hours: { ...(text(hours.timezone) ? { timezone: text(hours.timezone) } : {}), ...(config ? { business_config: config } : {}) },
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
