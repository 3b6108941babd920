// Loads the Baileys-based connector on first use, so the service starts without loading baileys (about a second).
import {
  TransientConnectorError,
  type Connector,
  type OutboundMessage,
  type Presence,
  type QrState,
} from '../../core/connector.js';
import type { ConnectionState, PrivacySettings } from '../../core/instance.js';

export class DeferredConnector implements Connector {
  private inner: Connector | null = null;
  private loading: Promise<Connector> | null = null;

  constructor(private readonly load: () => Promise<Connector>) {}

  private async loaded(): Promise<Connector> {
    if (this.inner) return this.inner;
    this.loading ??= this.load().then(
      (connector) => (this.inner = connector),
      (error: unknown) => {
        this.loading = null; // a later call may try again
        throw error;
      },
    );
    return this.loading;
  }

  private live(): Connector {
    if (!this.inner) throw new TransientConnectorError('the WhatsApp connection is not open');
    return this.inner;
  }

  async start(): Promise<void> {
    await (await this.loaded()).start();
  }

  async stop(): Promise<void> {
    await this.inner?.stop();
  }

  /** Also when never started: the stored session must be forgotten. */
  async logout(): Promise<void> {
    await (await this.loaded()).logout();
  }

  state(): ConnectionState {
    return this.inner?.state() ?? 'close';
  }

  qr(): QrState | null {
    return this.inner?.qr() ?? null;
  }

  lastActivityAt(): number | null {
    return this.inner?.lastActivityAt?.() ?? null;
  }

  send(message: OutboundMessage): Promise<void> {
    return this.live().send(message);
  }

  sendPresence(chatJid: string, presence: Presence): Promise<void> {
    return this.live().sendPresence(chatJid, presence);
  }

  updatePrivacy(settings: PrivacySettings): Promise<void> {
    return this.live().updatePrivacy(settings);
  }

  markRead(keys: { remoteJid: string; keyId: string }[]): Promise<void> {
    return this.live().markRead(keys);
  }

  async uploadMedia(encrypted: Buffer, kind: string): Promise<{ url: string; directPath: string }> {
    return this.inner?.uploadMedia ? this.inner.uploadMedia(encrypted, kind) : { url: '', directPath: '' };
  }
}
