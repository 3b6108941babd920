// An undici dispatcher that sends every request through an instance's proxy (HTTP CONNECT or SOCKS), guarded.
import { isIP } from 'node:net';
import { socksConnector } from 'fetch-socks';
import { Agent, Pool, ProxyAgent, type Dispatcher } from 'undici';
import type { ProxySettings } from '../../core/proxy.js';
import { ForbiddenAddressError, isForbiddenAddress, type AddressPolicy } from './address-policy.js';
import { createGuardedLookup } from './guarded-dispatcher.js';
import { ProxyCache } from './proxy-cache.js';

/** How long reaching the proxy (TCP, TLS to an https proxy, the SOCKS handshake) may take. */
const proxyConnectTimeoutMs = 10_000;

/** The proxy's own address must be allowed: a literal one is checked here, a name after DNS by the guarded lookup. */
export function checkProxyAddress(proxy: Pick<ProxySettings, 'host'>, policy: AddressPolicy): void {
  if (!isIP(proxy.host)) return;
  const reason = isForbiddenAddress(proxy.host, policy);
  if (reason) throw new ForbiddenAddressError(proxy.host, proxy.host, reason);
}

/** `Basic …` for a proxy that asks for credentials. */
export function basicAuthorization(proxy: Pick<ProxySettings, 'username' | 'password'>): string | undefined {
  if (!proxy.username) return undefined;
  return `Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ''}`).toString('base64')}`;
}

/** The proxy's address as a URL origin, without credentials (they travel in headers or the SOCKS handshake). */
export function proxyOrigin(proxy: Pick<ProxySettings, 'protocol' | 'host' | 'port'>, scheme: string = proxy.protocol): string {
  const host = proxy.host.includes(':') ? `[${proxy.host}]` : proxy.host;
  return `${scheme}://${host}:${proxy.port}`;
}

/** Resolves the proxy's host through the address guard (a literal address is checked as is). */
function guardedAddress(host: string, policy: AddressPolicy): Promise<string> {
  if (isIP(host)) {
    const reason = isForbiddenAddress(host, policy);
    return reason ? Promise.reject(new ForbiddenAddressError(host, host, reason)) : Promise.resolve(host);
  }
  const lookup = createGuardedLookup(policy);
  return new Promise((resolve, reject) => {
    lookup(host, { family: 0 }, (err, address) => (err ? reject(err) : resolve(String(address))));
  });
}

/**
 * The connections to an HTTP(S) proxy itself. An https proxy given by IP address is reached with no TLS server name
 * (RFC 6066 allows none for an address; Node warns when one is set, and undici sets the proxy's host): its certificate
 * is still checked against the address.
 */
function proxyConnections(origin: URL | string, options: Pool.Options): Dispatcher {
  const connect = options.connect;
  if (typeof connect !== 'function') return new Pool(origin, options);
  return new Pool(origin, {
    ...options,
    connect: (target, callback) => connect(isIP(target.hostname) ? { ...target, servername: undefined } : target, callback),
  });
}

/**
 * A dispatcher for undici's request/fetch that tunnels every request through the proxy: HTTP and HTTPS proxies with
 * CONNECT (undici's ProxyAgent, for http and https destinations alike), SOCKS4 and SOCKS5 with the `socks` client
 * (fetch-socks); destination names are resolved by the proxy. The connection to the proxy itself goes through the
 * outbound address guard.
 */
function createProxyDispatcher(proxy: ProxySettings, policy: AddressPolicy): Dispatcher {
  checkProxyAddress(proxy, policy);
  if (proxy.protocol === 'http' || proxy.protocol === 'https') {
    const token = basicAuthorization(proxy);
    return new ProxyAgent({
      uri: proxyOrigin(proxy),
      clientFactory: proxyConnections,
      ...(token ? { token } : {}),
      proxyTls: { lookup: createGuardedLookup(policy), timeout: proxyConnectTimeoutMs },
      connect: { timeout: proxyConnectTimeoutMs },
    });
  }
  const type = proxy.protocol === 'socks4' ? 4 : 5;
  const connect: Agent.Options['connect'] = (options, callback) => {
    guardedAddress(proxy.host, policy).then(
      (address) => {
        const connector = socksConnector(
          { host: address, port: proxy.port, type, ...(proxy.username ? { userId: proxy.username, password: proxy.password ?? '' } : {}) },
          { timeout: proxyConnectTimeoutMs },
        );
        connector(options, callback);
      },
      (error: Error) => callback(error, null),
    );
  };
  return new Agent({ connect });
}

const shared = new Map<boolean, ProxyCache<Dispatcher>>();

/** One long-lived dispatcher per proxy (and policy), so requests through it share connections. */
export function sharedProxyDispatcher(proxy: ProxySettings, denyPrivate: boolean): Dispatcher {
  let cache = shared.get(denyPrivate);
  if (!cache) {
    cache = new ProxyCache<Dispatcher>(
      (settings) => createProxyDispatcher(settings, { denyPrivate }),
      (dispatcher) => void dispatcher.close().catch(() => undefined),
    );
    shared.set(denyPrivate, cache);
  }
  return cache.for(proxy);
}
