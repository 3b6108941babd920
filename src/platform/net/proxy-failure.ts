// Says, in words a person can act on, when a failed outbound request failed because of the instance's proxy.
import type { ProxySettings } from '../../core/proxy.js';
import { proxyLabel } from '../../core/proxy.js';
import { findForbiddenAddressError } from './address-policy.js';

function chain(error: unknown): { code?: string; message: string }[] {
  const links: { code?: string; message: string }[] = [];
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 8; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    links.push({ code: typeof code === 'string' ? code : undefined, message: typeof message === 'string' ? message : '' });
    e = (e as { cause?: unknown }).cause ?? (e as { data?: unknown }).data;
  }
  return links;
}

const unreachableCodes: Record<string, string> = {
  ECONNREFUSED: 'refused the connection',
  ECONNRESET: 'closed the connection',
  ETIMEDOUT: 'did not answer in time',
  UND_ERR_CONNECT_TIMEOUT: 'did not answer in time',
  ENOTFOUND: 'has a host name that could not be resolved',
  EAI_AGAIN: 'has a host name that could not be resolved',
  EHOSTUNREACH: 'is unreachable',
  ENETUNREACH: 'is unreachable',
};

/** Node's codes for a TLS certificate it did not accept. */
const untrustedCertificateCodes = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * What a proxy failure is: the proxy cannot be reached (it may come back by itself: worth probing), it refuses the
 * credentials, its address is not allowed or (an https proxy) its certificate is not trusted (until the proxy or the
 * node's trust is changed), or it could not reach the destination (the proxy works; the destination did not answer
 * through it).
 */
export type ProxyFailureKind = 'unreachable' | 'credentials' | 'forbidden' | 'certificate' | 'destination';

/** Why a request through `proxy` failed, when the proxy is the cause; null when it is something else. */
export function proxyFailureKindOf(
  error: unknown,
  proxy: Pick<ProxySettings, 'protocol' | 'host' | 'port'>,
): { kind: ProxyFailureKind; message: string } | null {
  const message = proxyFailureOf(error, proxy);
  if (!message) return null;
  const kind: ProxyFailureKind = / refused the credentials/.test(message)
    ? 'credentials'
    : / outbound requests may not use /.test(message)
      ? 'forbidden'
      : / a certificate this node does not trust /.test(message)
        ? 'certificate'
        : / could not (open a tunnel to|reach) the destination/.test(message)
          ? 'destination'
          : 'unreachable';
  return { kind, message };
}

/**
 * Why a request through `proxy` failed, when the proxy is the cause (it cannot be reached, refused the credentials,
 * presented a certificate not trusted here, or could not reach the destination); null when the failure is something
 * else. Never mentions the credentials.
 */
export function proxyFailureOf(error: unknown, proxy: Pick<ProxySettings, 'protocol' | 'host' | 'port'>): string | null {
  const label = `the proxy ${proxyLabel(proxy)}`;
  const forbidden = findForbiddenAddressError(error);
  if (forbidden) return `${label} is at an address outbound requests may not use (${forbidden.reason})`;
  for (const { code, message } of chain(error)) {
    if (/\b407\b|Proxy Authentication Required/i.test(message)) return `${label} refused the credentials (HTTP 407 Proxy Authentication Required)`;
    if (/Socks5? Authentication failed|authentication failed|Socks4 Proxy rejected connection - \(?Rejected/i.test(message)) {
      return `${label} refused the credentials`;
    }
    // TLS is spoken to an https proxy, then through it: the certificate refused is the proxy's, or that of a proxy
    // that inspects TLS and signs what it tunnels with its own authority. Either way the node must trust that one.
    const certificateRefused =
      code !== undefined && untrustedCertificateCodes.has(code) && (code !== 'ERR_TLS_CERT_ALTNAME_INVALID' || message.includes(proxy.host));
    if (proxy.protocol === 'https' && certificateRefused) {
      return (
        `${label} presented a certificate this node does not trust (${code}: ${message}); use a proxy certificate from a ` +
        'public authority, or give the node the authority that signed it (NODE_EXTRA_CA_CERTS, read at start)'
      );
    }
    const tunnel = /Proxy response \((\d{3})\)/.exec(message);
    if (tunnel) return `${label} could not open a tunnel to the destination (HTTP ${tunnel[1]})`;
    if (/Socks5? proxy rejected connection|SocksClient|Socks4? Proxy/i.test(message)) return `${label} could not reach the destination (${message})`;
    // The only connection made directly is the one to the proxy: a network error of it is the proxy's.
    if (code && unreachableCodes[code] && (message.includes(`${proxy.host}:${proxy.port}`) || message.includes(proxy.host) || !message)) {
      return `${label} ${unreachableCodes[code]} (${code})`;
    }
  }
  return null;
}
