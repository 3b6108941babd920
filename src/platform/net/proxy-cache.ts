// Keeps one dispatcher (or agent) per proxy in use, so connections through a proxy are pooled across requests.
import { createHash } from 'node:crypto';
import type { ProxySettings } from '../../core/proxy.js';

/** A fingerprint of everything that makes a proxy connection (credentials included; kept in memory only). */
function fingerprint(proxy: ProxySettings): string {
  return createHash('sha256')
    .update(JSON.stringify([proxy.protocol, proxy.host, proxy.port, proxy.username, proxy.password]))
    .digest('hex');
}

/** Up to `limit` built clients by proxy; the least recently used one is closed when room is needed. */
export class ProxyCache<T> {
  private readonly built = new Map<string, T>();

  constructor(
    private readonly build: (proxy: ProxySettings) => T,
    private readonly close: (client: T) => void = () => undefined,
    private readonly limit = 64,
  ) {}

  for(proxy: ProxySettings): T {
    const key = fingerprint(proxy);
    let client = this.built.get(key);
    if (client) {
      // Most recently used last.
      this.built.delete(key);
    } else {
      client = this.build(proxy);
      while (this.built.size >= this.limit) {
        const oldest = this.built.keys().next().value as string;
        this.close(this.built.get(oldest) as T);
        this.built.delete(oldest);
      }
    }
    this.built.set(key, client);
    return client;
  }
}
