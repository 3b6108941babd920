// Checks that an instance's proxy can be reached (a TCP connection, through the address guard), with a time limit.
import { connect } from 'node:net';
import { proxyLabel, type ProxySettings } from '../../core/proxy.js';
import type { AddressPolicy } from './address-policy.js';
import { createGuardedLookup } from './guarded-dispatcher.js';
import { checkProxyAddress } from './proxy-dispatcher.js';
import { proxyFailureOf } from './proxy-failure.js';

/**
 * Null when a TCP connection to the proxy opens within `timeoutMs`; else why not, in words a person can act on. The
 * connection is closed at once: nothing is sent (the credentials are checked by the first real request).
 */
export function probeProxy(proxy: ProxySettings, policy: AddressPolicy, timeoutMs = 5_000): Promise<string | null> {
  const label = `the proxy ${proxyLabel(proxy)}`;
  try {
    checkProxyAddress(proxy, policy);
  } catch (error) {
    return Promise.resolve(proxyFailureOf(error, proxy) ?? `${label} cannot be used`);
  }
  return new Promise((resolve) => {
    const socket = connect({ host: proxy.host, port: proxy.port, lookup: createGuardedLookup(policy) });
    const finish = (reason: string | null) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => finish(`${label} did not answer within ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
    socket.once('connect', () => finish(null));
    socket.once('error', (error) => finish(proxyFailureOf(error, proxy) ?? `${label} cannot be reached (${error.message})`));
  });
}
