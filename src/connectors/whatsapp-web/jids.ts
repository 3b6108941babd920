// WhatsApp addresses: the owner's normalised address, and the phone address behind an @lid one when it is known.
import { BoundedMap } from './bounded-map.js';

/** `5511999990000:12@s.whatsapp.net` (a device address) → `5511999990000@s.whatsapp.net`; null when not a phone address. */
export function ownerJidOf(meId: string | undefined | null): string | null {
  if (!meId) return null;
  const [userPart, server] = meId.split('@');
  const user = userPart?.split(':')[0] ?? '';
  if (!/^\d+$/.test(user) || (server !== 's.whatsapp.net' && server !== 'c.us')) return null;
  return `${user}@s.whatsapp.net`;
}

export const isLid = (jid: string | null | undefined): jid is string => typeof jid === 'string' && jid.endsWith('@lid');
export const isPhoneJid = (jid: string | null | undefined): jid is string => typeof jid === 'string' && jid.endsWith('@s.whatsapp.net');
export const isGroupJid = (jid: string | null | undefined): boolean => typeof jid === 'string' && jid.endsWith('@g.us');

/** Drops a device suffix: `123:4@lid` → `123@lid`. */
function withoutDevice(jid: string): string {
  const at = jid.indexOf('@');
  if (at < 0) return jid;
  const user = jid.slice(0, at).split(':')[0];
  return `${user}${jid.slice(at)}`;
}

/** An address as reported: the phone address when known, and the other form (`…Alt`) when there is one. */
export interface ResolvedAddress {
  jid: string;
  alt?: string;
}

/**
 * Knows which phone address hides behind an @lid address: from Baileys' hints (remoteJidAlt, participantAlt, contacts
 * with both forms, lid-mapping events) and, failing those, from Baileys' own LID store.
 */
export class AddressBook {
  private readonly phoneOfLid = new BoundedMap<string, string>(20_000);
  private readonly lidOfPhone = new BoundedMap<string, string>(20_000);

  constructor(private readonly lookup: (lid: string) => Promise<string | null>) {}

  remember(lid: string | null | undefined, phone: string | null | undefined): void {
    if (!isLid(lid) || !isPhoneJid(phone)) return;
    this.phoneOfLid.set(withoutDevice(lid), withoutDevice(phone));
    this.lidOfPhone.set(withoutDevice(phone), withoutDevice(lid));
  }

  /** The other address of a person as far as already known (no lookup): phone for @lid, @lid for phone; else null. */
  alternateOf(jid: string): string | null {
    const key = withoutDevice(jid);
    if (isLid(key)) return this.phoneOfLid.get(key) ?? null;
    if (isPhoneJid(key)) return this.lidOfPhone.get(key) ?? null;
    return null;
  }

  async phoneOf(lid: string): Promise<string | null> {
    const key = withoutDevice(lid);
    const known = this.phoneOfLid.get(key);
    if (known) return known;
    try {
      const found = await this.lookup(key);
      if (found && isPhoneJid(withoutDevice(found))) {
        this.remember(key, found);
        return withoutDevice(found);
      }
    } catch {
      // The LID store is best effort: an unknown phone address just leaves the @lid one.
    }
    return null;
  }

  /**
   * The address to report for `jid`: its phone address when it is an @lid one and the phone address is known
   * (`hint` is Baileys' alternative address, when it gave one), with the other form as `alt`.
   */
  async resolve(jid: string, hint?: string | null): Promise<ResolvedAddress> {
    if (isLid(jid)) {
      if (isPhoneJid(hint)) this.remember(jid, hint);
      const phone = await this.phoneOf(jid);
      return phone ? { jid: phone, alt: jid } : { jid };
    }
    if (isPhoneJid(jid) && isLid(hint)) {
      this.remember(hint, jid);
      return { jid, alt: hint };
    }
    const lid = isPhoneJid(jid) ? this.lidOfPhone.get(withoutDevice(jid)) : undefined;
    return lid ? { jid, alt: lid } : { jid };
  }
}
