// A Node http.Agent that connects through an instance's proxy (for libraries that take one: the WhatsApp Web socket).
import type { Agent } from 'node:http';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import type { ProxySettings } from '../../core/proxy.js';
import type { AddressPolicy } from './address-policy.js';
import { createGuardedLookup } from './guarded-dispatcher.js';
import { ProxyCache } from './proxy-cache.js';
import { basicAuthorization, checkProxyAddress, proxyOrigin } from './proxy-dispatcher.js';

/**
 * An agent tunnelling through the proxy: HTTP CONNECT for http and https proxies (https-proxy-agent), SOCKS5 with
 * remote DNS and SOCKS4a for socks proxies (socks-proxy-agent). The proxy's own address goes through the address guard.
 */
function createProxyAgent(proxy: ProxySettings, policy: AddressPolicy): Agent {
  checkProxyAddress(proxy, policy);
  const lookup = createGuardedLookup(policy);
  if (proxy.protocol === 'http' || proxy.protocol === 'https') {
    const authorization = basicAuthorization(proxy);
    // No `timeout`: for an http.Agent it is an idle timeout, which would cut a quiet websocket.
    return new HttpsProxyAgent(proxyOrigin(proxy), {
      lookup,
      ...(authorization ? { headers: { 'Proxy-Authorization': authorization } } : {}),
    });
  }
  // socks5h / socks4a: the proxy resolves destination names (WhatsApp's hosts are never looked up here).
  const url = new URL(proxyOrigin(proxy, proxy.protocol === 'socks4' ? 'socks4a' : 'socks5h'));
  if (proxy.username) {
    url.username = encodeURIComponent(proxy.username);
    if (proxy.password) url.password = encodeURIComponent(proxy.password);
  }
  // No `timeout` either: socks-proxy-agent also turns it into an idle timeout of the tunnelled socket (the socks
  // client's own 20 s bounds the handshake).
  return new SocksProxyAgent(url, { socketOptions: { lookup } });
}

const shared = new Map<boolean, ProxyCache<Agent>>();

/** One agent per proxy (and policy), shared by the sockets that go through it. */
export function sharedProxyAgent(proxy: ProxySettings, denyPrivate: boolean): Agent {
  let cache = shared.get(denyPrivate);
  if (!cache) {
    cache = new ProxyCache<Agent>(
      (settings) => createProxyAgent(settings, { denyPrivate }),
      (agent) => agent.destroy(),
    );
    shared.set(denyPrivate, cache);
  }
  return cache.for(proxy);
}
