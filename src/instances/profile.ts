// Profile use cases: pictures, profiles and business profiles of any account, the own name, "about" and picture, privacy.
import type { Connector, ProfileInfo } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import { invalidInput } from '../core/errors.js';
import type { Instance, PrivacySettings } from '../core/instance.js';
import type { ProxySettings } from '../core/proxy.js';
import { loadMedia } from '../media/load.js';
import { profilePicture } from '../media/profile-picture.js';
import { toJid } from '../messages/jid.js';

export interface ProfileOperationsDeps {
  /** The instance's connector (created when it has none yet). */
  connectorOf(instance: Instance): Connector;
  kinds: Pick<ConnectorKinds, 'assertCan'>;
  /** Stores the own profile's new name, "about" or picture URL on the instance (fetchInstances shows them). */
  storeProfile(instance: Instance, change: { profileName?: string; profileStatus?: string; profilePicUrl?: string | null }): Promise<unknown>;
  /** How a picture given as a URL is fetched (the guarded media fetcher), and the largest taken. */
  media: { maxBytes: number; denyPrivate: boolean; fetchTimeoutMs: number };
  /** The instance's proxy in effect (a picture URL is downloaded through it); absent: none. */
  proxyOf?(instance: Instance): Promise<ProxySettings | null>;
}

/** What an account that never changed its privacy settings has (WhatsApp's defaults for a new account). */
const defaultPrivacy: PrivacySettings = {
  readreceipts: 'all',
  profile: 'all',
  status: 'contacts',
  online: 'all',
  last: 'all',
  groupadd: 'all',
};

const maxNameLength = 100;
const maxStatusLength = 139;

export interface ProfileAnswer extends ProfileInfo {
  wuid: string;
  numberExists: true;
}

export class ProfileOperations {
  constructor(private readonly deps: ProfileOperationsDeps) {}

  /** Null whenever the picture cannot be had (no picture, privacy, not linked, a kind without profiles), as Evolution. */
  async pictureUrl(instance: Instance, number: string | undefined): Promise<{ wuid: string; profilePictureUrl: string | null }> {
    if (!number) throw invalidInput('number is required');
    const wuid = toJid(number);
    const connector = this.deps.connectorOf(instance);
    if (!connector.profile || connector.state() !== 'open') return { wuid, profilePictureUrl: null };
    const profilePictureUrl = await connector.profile.pictureUrl(wuid).catch(() => null);
    return { wuid, profilePictureUrl };
  }

  /** The profile of `number`, or of the own account when absent; a number not on WhatsApp is a 400. */
  async fetch(instance: Instance, number: string | undefined): Promise<ProfileAnswer> {
    this.deps.kinds.assertCan(instance, 'profile');
    const connector = this.linked(instance, 'fetching a profile');
    const wuid = number ? toJid(number) : instance.ownerJid;
    if (!wuid) throw invalidInput(`instance "${instance.name}" has no own address yet`);
    const profile = await connector.profile?.fetch(wuid);
    if (!profile) throw invalidInput(`number ${number ?? wuid} is not on WhatsApp (jid ${wuid}, exists: false)`);
    return { wuid, numberExists: true, ...profile };
  }

  async setName(instance: Instance, name: string | undefined): Promise<void> {
    this.deps.kinds.assertCan(instance, 'profile');
    const value = checkedText('name', name, maxNameLength);
    if (value === '') throw invalidInput('name must not be empty');
    const connector = this.linked(instance, 'changing the profile name');
    await connector.profile?.setName(value);
    await this.deps.storeProfile(instance, { profileName: value });
  }

  async setStatus(instance: Instance, status: string | undefined): Promise<void> {
    this.deps.kinds.assertCan(instance, 'profile');
    const value = checkedText('status', status, maxStatusLength);
    const connector = this.linked(instance, 'changing the profile status');
    await connector.profile?.setStatus(value);
    await this.deps.storeProfile(instance, { profileStatus: value });
  }

  /** Sets the own picture from a URL or base64 image (cropped square, as a JPEG); fetchInstances shows its new URL. */
  async setPicture(instance: Instance, picture: string | undefined): Promise<void> {
    this.deps.kinds.assertCan(instance, 'profile');
    if (picture === undefined || picture.trim() === '') throw invalidInput('picture is required: an image URL or base64');
    const connector = this.linked(instance, 'changing the profile picture');
    const { maxBytes, denyPrivate, fetchTimeoutMs } = this.deps.media;
    const proxy = (await this.deps.proxyOf?.(instance)) ?? null;
    const loaded = await loadMedia(picture, { maxBytes, denyPrivate, timeoutMs: fetchTimeoutMs, field: 'picture', proxy });
    const jpeg = await profilePicture(loaded.bytes, 'picture');
    await connector.profile?.setPicture(jpeg);
    const own = instance.ownerJid;
    const profilePicUrl = own ? await connector.profile?.pictureUrl(own).catch(() => null) : null;
    await this.deps.storeProfile(instance, { profilePicUrl: profilePicUrl ?? null });
  }

  async removePicture(instance: Instance): Promise<void> {
    this.deps.kinds.assertCan(instance, 'profile');
    const connector = this.linked(instance, 'removing the profile picture');
    await connector.profile?.removePicture();
    await this.deps.storeProfile(instance, { profilePicUrl: null });
  }

  /**
   * The business profile of `number` (the own account's when absent); an account that is not a business answers
   * `isBusiness: false` with the number's check (jid, exists, number…), as Evolution.
   */
  async businessProfile(instance: Instance, number: string | undefined): Promise<Record<string, unknown>> {
    this.deps.kinds.assertCan(instance, 'profile');
    const connector = this.linked(instance, 'fetching a business profile');
    const jid = number ? toJid(number) : instance.ownerJid;
    if (!jid) throw invalidInput(`instance "${instance.name}" has no own address yet`);
    const business = await connector.profile?.businessProfile(jid);
    if (business) return { isBusiness: true, ...business };
    const asked = number ?? jid.split('@')[0];
    const [check] = connector.contacts ? await connector.contacts.onWhatsApp([{ number: asked, jid }]) : [{ jid, exists: true, number: asked }];
    return { isBusiness: false, message: 'Not is business profile', ...check };
  }

  /** As the messenger has them when it can say (WhatsApp Web); else the stored ones, or the defaults when never set. */
  async privacy(instance: Instance): Promise<PrivacySettings> {
    this.deps.kinds.assertCan(instance, 'privacy');
    const connector = this.deps.connectorOf(instance);
    if (connector.privacy?.fetchPrivacy) {
      this.linked(instance, 'fetching privacy settings');
      return connector.privacy.fetchPrivacy();
    }
    return { ...defaultPrivacy, ...(instance.privacy ?? {}) };
  }

  private linked(instance: Instance, what: string): Connector {
    const connector = this.deps.connectorOf(instance);
    if (connector.state() !== 'open') {
      throw invalidInput(`instance "${instance.name}" is not connected (state ${connector.state()}); ${what} needs a linked instance`);
    }
    return connector;
  }
}

function checkedText(field: string, value: string | undefined, max: number): string {
  if (value === undefined || value === null) throw invalidInput(`${field} is required`);
  const trimmed = value.trim();
  if (trimmed.length > max) throw invalidInput(`${field} must be at most ${max} characters`);
  return trimmed;
}
