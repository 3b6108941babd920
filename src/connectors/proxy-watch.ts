// Watches an instance's proxy while it cannot be reached: says why, probes it again with growing waits, tells when it is back.
import type { ProxySettings } from '../core/proxy.js';
import { delayFor, type BackoffPolicy } from '../platform/util/backoff.js';

export interface ProxyWatchDeps {
  /** The instance's proxy in effect now (null: none, nothing to watch). */
  proxy(): Promise<ProxySettings | null>;
  /** Null when the proxy can be reached, else why not. */
  probe(proxy: ProxySettings): Promise<string | null>;
  /** The proxy became unreachable (or its reason changed). */
  down(reason: string): Promise<void>;
  /** The proxy can be reached again (or the instance no longer has one). */
  up(): Promise<void>;
  /** Waits between probes while it is down. */
  backoff?: BackoffPolicy;
  onError?(error: unknown): void;
}

const defaultBackoff: BackoffPolicy = { initialMs: 1_000, maxMs: 30_000, factor: 2, jitter: 0.2 };

export class ProxyWatch {
  private current: string | null = null;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: ProxyWatchDeps) {}

  /** Why the proxy cannot be used, while that is so. */
  reason(): string | null {
    return this.current;
  }

  /** Probes now (at start, after a change of proxy): answers the reason it is down, or null. */
  async check(): Promise<string | null> {
    this.stopped = false;
    this.clear();
    this.attempt = 0;
    return this.probeNow();
  }

  /**
   * A request through the proxy failed because of it: down until a probe finds it again, or (`lasting`: refused
   * credentials, a forbidden address, which a probe cannot see) until the proxy is changed or the instance restarted.
   */
  async failed(reason: string, lasting = false): Promise<void> {
    if (this.stopped) return;
    const changed = reason !== this.current;
    this.current = reason;
    if (changed) await this.deps.down(reason);
    if (lasting) this.clear();
    else if (!this.timer) this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.clear();
    this.current = null;
  }

  private async probeNow(): Promise<string | null> {
    const proxy = await this.deps.proxy();
    const reason = proxy ? await this.deps.probe(proxy) : null;
    if (this.stopped) return reason;
    if (reason) {
      await this.failed(reason);
    } else if (this.current !== null) {
      this.current = null;
      this.attempt = 0;
      await this.deps.up();
    }
    return reason;
  }

  private schedule(): void {
    this.attempt += 1;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.probeNow().catch((error: unknown) => this.deps.onError?.(error));
      },
      delayFor(this.deps.backoff ?? defaultBackoff, this.attempt),
    );
    this.timer.unref();
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
