// An instance's outbound proxy: the protocols it may speak, its settings, and how a request's proxy fields are checked.
import { invalidInput } from './errors.js';

export const proxyProtocols = ['http', 'https', 'socks4', 'socks5'] as const;
export type ProxyProtocol = (typeof proxyProtocols)[number];

/** A proxy everything the instance sends out goes through (the password in clear: only ever held in memory). */
export interface ProxySettings {
  host: string;
  port: number;
  protocol: ProxyProtocol;
  /** Null: the proxy asks for no credentials. */
  username: string | null;
  password: string | null;
}

/** What an answer shows for a stored password: it is never shown again, only that there is one. */
export const maskedPassword = '********';

/** The request fields of a proxy, as `proxy/set` names them (instance/create prefixes them: `proxyHost`…). */
export interface ProxyInput {
  enabled?: unknown;
  host?: unknown;
  port?: unknown;
  protocol?: unknown;
  username?: unknown;
  password?: unknown;
}

/** The field names errors mention (`host` for proxy/set, `proxyHost` for instance/create). */
export type ProxyFieldNames = Record<'enabled' | 'host' | 'port' | 'protocol' | 'username' | 'password', string>;

export const proxySetFields: ProxyFieldNames = {
  enabled: 'enabled',
  host: 'host',
  port: 'port',
  protocol: 'protocol',
  username: 'username',
  password: 'password',
};

/** Evolution's `socks` (SOCKS5 with remote DNS) is accepted as `socks5`. */
const protocolAliases: Record<string, ProxyProtocol> = { socks: 'socks5', socks5h: 'socks5', socks4a: 'socks4' };

const hostPattern = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;

/** A host name or an IP address (IPv6 with or without brackets); never a URL. */
function hostProblem(host: string, field: string): string | null {
  if (host === '') return `${field} is required: the proxy's host name or IP address`;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) return `${field} must be a host name or IP address without a scheme (put the scheme in protocol)`;
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (bare.includes(':')) return /^[0-9A-Fa-f:.]+$/.test(bare) ? null : `${field} is not a valid IPv6 address`;
  return hostPattern.test(host) ? null : `${field} must be a host name or IP address (letters, digits, "." and "-"), got "${host.slice(0, 64)}"`;
}

function text(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidInput(`${field} must be a string`);
  return value;
}

/** The port as a number: Evolution sends it as a string of digits; a JSON integer is taken too. */
function portOf(value: unknown, field: string): number {
  if (value === undefined || value === null || value === '') throw invalidInput(`${field} is required: the proxy's port (1-65535)`);
  const digits = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : null;
  if (digits === null) throw invalidInput(`${field} must be a port number (1-65535) as a string or an integer`);
  const port = /^\d{1,5}$/.test(digits) ? Number(digits) : Number.NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw invalidInput(`${field} must be a port number between 1 and 65535, got "${digits.slice(0, 16)}"`);
  return port;
}

function protocolOf(value: unknown, field: string): ProxyProtocol {
  const given = text(value, field)?.trim().toLowerCase();
  if (!given) throw invalidInput(`${field} is required: one of ${proxyProtocols.join(', ')}`);
  const protocol = protocolAliases[given] ?? given;
  if (!(proxyProtocols as readonly string[]).includes(protocol))
    throw invalidInput(`${field} must be one of ${proxyProtocols.join(', ')} (got "${given.slice(0, 16)}")`);
  return protocol as ProxyProtocol;
}

/**
 * Checks a proxy given in a request. Answers null for a disabled proxy (`enabled: false`: off, nothing else needed),
 * else the settings; `password` equal to the mask answers `keepPassword` (a client echoing what find answered).
 * Throws a 400 naming the field to fix.
 */
export function parseProxy(input: ProxyInput, names: ProxyFieldNames = proxySetFields): { settings: ProxySettings; keepPassword: boolean } | null {
  if (input.enabled !== undefined && typeof input.enabled !== 'boolean') throw invalidInput(`${names.enabled} must be a boolean`);
  if (input.enabled === false) return null;
  const host = (text(input.host, names.host) ?? '').trim();
  const hostIssue = hostProblem(host, names.host);
  if (hostIssue) throw invalidInput(hostIssue);
  const port = portOf(input.port, names.port);
  const protocol = protocolOf(input.protocol, names.protocol);
  const username = text(input.username, names.username) || null;
  const password = text(input.password, names.password) || null;
  if (password !== null && username === null) throw invalidInput(`${names.username} is required when ${names.password} is given`);
  if (protocol === 'socks4' && password !== null) {
    throw invalidInput(`${names.password} cannot be used with socks4 (SOCKS4 knows only a user id): use socks5 for a password`);
  }
  if (username && (username.length > 255 || (password?.length ?? 0) > 255)) {
    throw invalidInput(`${names.username} and ${names.password} must be at most 255 characters each`);
  }
  const keepPassword = password === maskedPassword;
  return { settings: { host: host.replace(/^\[(.*)\]$/, '$1'), port, protocol, username, password: keepPassword ? null : password }, keepPassword };
}

/** How a proxy is named in messages and logs: never its credentials. */
export function proxyLabel(proxy: Pick<ProxySettings, 'protocol' | 'host' | 'port'>): string {
  const host = proxy.host.includes(':') ? `[${proxy.host}]` : proxy.host;
  return `${proxy.protocol}://${host}:${proxy.port}`;
}
