// The QR linking flow of one unlinked instance: a code valid for a while, refreshed until the limit.
import type { QrState } from '../../core/connector.js';
import type { LinkCodes } from './codes.js';
import { newLinkCode } from './ids.js';

export interface QrFlowOptions {
  instanceId: string;
  codes: LinkCodes;
  render: (code: string) => Promise<string>;
  ttlMs: number;
  /** How many codes are shown before the flow gives up. */
  limit: number;
  /** A new code is showing (the first one included). */
  onQr: (qr: QrState) => Promise<void>;
  /** The last code expired unscanned; the codes are already deleted. */
  onLimit: () => Promise<void>;
  /** Errors of timer-driven work, which has no caller to throw to. */
  onError: (error: unknown) => void;
}

export class QrFlow {
  private timer: NodeJS.Timeout | undefined;
  private ended = false;
  private showing: QrState | null = null;

  constructor(private readonly options: QrFlowOptions) {}

  /** Shows the first code. */
  async begin(): Promise<void> {
    await this.show(1);
  }

  current(): QrState | null {
    return this.showing;
  }

  /** Ends the flow: no more codes, no more callbacks. The stored codes are left to the caller. */
  end(): void {
    this.ended = true;
    this.showing = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async show(count: number): Promise<void> {
    const { codes, instanceId, ttlMs } = this.options;
    const code = newLinkCode();
    const base64 = await this.options.render(code);
    if (this.ended) return;
    const now = Date.now();
    await codes.replace(instanceId, code, now, now + ttlMs);
    if (this.ended) {
      // Ended while the code was being stored: it must not stay scannable.
      await codes.remove(code);
      return;
    }
    const qr: QrState = { code, base64, count, pairingCode: null };
    this.showing = qr;
    this.timer = setTimeout(() => {
      this.expire().catch(this.options.onError);
    }, ttlMs);
    this.timer.unref();
    await this.options.onQr(qr);
  }

  private async expire(): Promise<void> {
    this.timer = undefined;
    const expired = this.showing;
    if (this.ended || !expired) return;
    if (expired.count >= this.options.limit) {
      this.end();
      await this.options.codes.removeAllOf(this.options.instanceId);
      await this.options.onLimit();
      return;
    }
    await this.show(expired.count + 1);
  }
}
