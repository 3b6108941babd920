// Which IP addresses outbound requests (media fetches, webhook deliveries) may connect to.

import { isIP } from 'node:net';

export interface AddressPolicy {
  /** Also refuse loopback, private, link-local, CGNAT and other non-public ranges. */
  denyPrivate: boolean;
}

interface Range {
  /** Network address as bytes (4 for IPv4, 16 for IPv6). */
  network: Uint8Array;
  prefix: number;
  reason: string;
  /** Refused even when private addresses are allowed. */
  always: boolean;
}

const METADATA = 'cloud metadata / link-local addresses are never allowed';

function cidrRange(parse: (address: string) => Uint8Array | null, cidr: string, reason: string, always: boolean): Range {
  const [address, prefix] = cidr.split('/');
  const network = parse(address);
  if (!network) throw new Error(`not an address range: ${cidr}`);
  return { network, prefix: Number(prefix), reason, always };
}

const v4Range = (cidr: string, reason: string, always = false): Range => cidrRange(parseIPv4, cidr, reason, always);
const v6Range = (cidr: string, reason: string, always = false): Range => cidrRange(parseIPv6, cidr, reason, always);

const IPV4_RANGES: Range[] = [
  v4Range('169.254.0.0/16', METADATA, true),
  v4Range('0.0.0.0/8', 'the "this network" range 0.0.0.0/8 is not allowed'),
  v4Range('10.0.0.0/8', 'private addresses are not allowed'),
  v4Range('100.64.0.0/10', 'carrier-grade NAT addresses are not allowed'),
  v4Range('127.0.0.0/8', 'loopback addresses are not allowed'),
  v4Range('172.16.0.0/12', 'private addresses are not allowed'),
  v4Range('192.168.0.0/16', 'private addresses are not allowed'),
  v4Range('224.0.0.0/4', 'multicast addresses are not allowed'),
  v4Range('240.0.0.0/4', 'reserved and broadcast addresses are not allowed'),
];

const IPV6_RANGES: Range[] = [
  v6Range('fd00:ec2::254/128', METADATA, true),
  v6Range('::/128', 'the unspecified address is not allowed'),
  v6Range('::1/128', 'loopback addresses are not allowed'),
  v6Range('fc00::/7', 'private (unique local) addresses are not allowed'),
  v6Range('fe80::/10', 'link-local addresses are not allowed'),
  v6Range('ff00::/8', 'multicast addresses are not allowed'),
];

/** IPv6 prefixes whose last 32 bits carry an IPv4 address that is what actually gets reached. */
const IPV4_EMBEDDING: Range[] = [
  v6Range('::ffff:0:0/96', 'IPv4-mapped'), // ::ffff:a.b.c.d
  v6Range('64:ff9b::/96', 'NAT64'), // well-known NAT64 prefix
  v6Range('::/96', 'IPv4-compatible'), // deprecated ::a.b.c.d
];

function parseIPv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i];
    if (!/^\d{1,3}$/.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    bytes[i] = value;
  }
  return bytes;
}

function parseIPv6(text: string): Uint8Array | null {
  let rest = text;
  const zone = rest.indexOf('%');
  if (zone !== -1) rest = rest.slice(0, zone);
  if (rest.startsWith('[') && rest.endsWith(']')) rest = rest.slice(1, -1);

  // A dotted IPv4 tail (::ffff:1.2.3.4) stands for the last two groups.
  const lastColon = rest.lastIndexOf(':');
  const last = rest.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIPv4(last);
    if (!v4 || lastColon === -1) return null;
    const hi = ((v4[0] << 8) | v4[1]).toString(16);
    const lo = ((v4[2] << 8) | v4[3]).toString(16);
    rest = `${rest.slice(0, lastColon + 1)}${hi}:${lo}`;
  }

  const halves = rest.split('::');
  if (halves.length > 2) return null;
  const toGroups = (s: string): number[] | null => {
    if (s === '') return [];
    const groups: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      groups.push(parseInt(g, 16));
    }
    return groups;
  };
  const head = toGroups(halves[0]);
  const back = halves.length === 2 ? toGroups(halves[1]) : [];
  if (!head || !back) return null;
  const explicit = head.length + back.length;
  let groups: number[];
  if (halves.length === 2) {
    if (explicit > 7) return null;
    groups = [...head, ...new Array<number>(8 - explicit).fill(0), ...back];
  } else {
    if (explicit !== 8) return null;
    groups = head;
  }
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  return bytes;
}

function inRange(bytes: Uint8Array, range: Range): boolean {
  if (bytes.length !== range.network.length) return false;
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i] & mask) !== (range.network[i] & mask)) return false;
  }
  return true;
}

function check(bytes: Uint8Array, ranges: Range[], policy: AddressPolicy): string | null {
  for (const range of ranges) {
    if (inRange(bytes, range) && (range.always || policy.denyPrivate)) return range.reason;
  }
  return null;
}

/**
 * Why `ip` must not be connected to, or null when it may be.
 * Cloud metadata addresses (169.254.0.0/16, fd00:ec2::254) are always refused; with
 * `denyPrivate` every non-public range is refused too. IPv6 forms that embed an IPv4
 * address (mapped, NAT64, compatible) are judged by the IPv4 address they reach.
 * Anything that is not an IP address is refused (fail closed).
 */
export function isForbiddenAddress(ip: string, opts: AddressPolicy): string | null {
  const family = isIP(ip.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, ''));
  if (family === 4) {
    const bytes = parseIPv4(ip);
    return bytes ? check(bytes, IPV4_RANGES, opts) : 'not a valid IP address';
  }
  if (family !== 6) return 'not a valid IP address';
  const bytes = parseIPv6(ip);
  if (!bytes) return 'not a valid IP address';
  const direct = check(bytes, IPV6_RANGES, opts);
  if (direct) return direct;
  for (const embedding of IPV4_EMBEDDING) {
    if (inRange(bytes, embedding)) {
      const reason = check(bytes.subarray(12), IPV4_RANGES, opts);
      if (reason) return reason;
      break;
    }
  }
  return null;
}

/** Thrown (by the guarded dispatcher and URL checks) when a destination is not allowed. */
export class ForbiddenAddressError extends Error {
  readonly code = 'ERR_FORBIDDEN_ADDRESS';
  readonly address: string;
  readonly reason: string;
  readonly host: string;

  constructor(host: string, address: string, reason: string) {
    super(host === address ? `${address} is a forbidden address: ${reason}` : `${host} resolves to a forbidden address (${address}): ${reason}`);
    this.name = 'ForbiddenAddressError';
    this.host = host;
    this.address = address;
    this.reason = reason;
  }
}

/** Finds a ForbiddenAddressError in an error or its `cause` chain (HTTP clients wrap them). */
export function findForbiddenAddressError(err: unknown): ForbiddenAddressError | null {
  for (let e = err, depth = 0; e && depth < 8; depth++) {
    if (e instanceof ForbiddenAddressError) return e;
    if (typeof e !== 'object') break;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

/** The URL's host without IPv6 brackets. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Checks a URL whose host is a literal IP address (no DNS involved) before connecting.
 * Returns the refusal, or null when the host is allowed or is a name (names are checked
 * after resolution by the guarded dispatcher).
 */
export function checkLiteralHost(url: URL, opts: AddressPolicy): ForbiddenAddressError | null {
  const host = urlHost(url);
  if (!isIP(host)) return null;
  const reason = isForbiddenAddress(host, opts);
  return reason ? new ForbiddenAddressError(host, host, reason) : null;
}
