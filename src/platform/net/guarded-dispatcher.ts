// An undici Agent that only connects to addresses the address policy allows, checked after DNS.

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { ForbiddenAddressError, isForbiddenAddress, type AddressPolicy } from './address-policy.js';

/** Resolves a host name to all of its addresses (injectable for tests). */
export type Resolver = (hostname: string, family: number) => Promise<LookupAddress[]>;

export interface GuardedDispatcherOptions extends AddressPolicy {
  /** How long establishing a connection (TCP + TLS) may take; undici's default is 10 s. */
  connectTimeoutMs?: number;
  /** Replaces the system resolver (tests use it to simulate DNS answers). */
  resolve?: Resolver;
}

const systemResolver: Resolver = (hostname, family) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, family, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

/**
 * A `lookup` for net/tls.connect that resolves the name, drops forbidden addresses and
 * fails when none are left. The socket then connects to exactly the address returned
 * here, so a second (rebinding) DNS answer never gets a say.
 */
export function createGuardedLookup(opts: GuardedDispatcherOptions): LookupFunction {
  const resolve = opts.resolve ?? systemResolver;
  return (hostname, options, callback) => {
    const wanted = options.family;
    const family = wanted === 4 || wanted === 'IPv4' ? 4 : wanted === 6 || wanted === 'IPv6' ? 6 : 0;
    resolve(hostname, family).then(
      (addresses) => {
        const allowed = addresses.filter((a) => isForbiddenAddress(a.address, opts) === null);
        if (allowed.length === 0) {
          // Every address is forbidden here, so the first one has a reason.
          const first = addresses[0];
          const reason = first ? isForbiddenAddress(first.address, opts) : null;
          const err =
            first && reason !== null
              ? new ForbiddenAddressError(hostname, first.address, reason)
              : Object.assign(new Error(`${hostname} did not resolve to any address`), { code: 'ENOTFOUND' });
          callback(err, options.all ? [] : '', undefined);
          return;
        }
        if (options.all) callback(null, allowed);
        else callback(null, allowed[0].address, allowed[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, options.all ? [] : '', undefined),
    );
  };
}

/**
 * An undici Agent for outbound requests to caller-supplied URLs. Literal IP hosts are
 * checked before connecting; host names are checked on every address they resolve to.
 * Pass it as `dispatcher` to undici's request/fetch. Redirects must be followed by the
 * caller (each hop goes through this dispatcher again).
 */
export function createGuardedDispatcher(opts: GuardedDispatcherOptions): Agent {
  const policy: AddressPolicy = { denyPrivate: opts.denyPrivate };
  const base = buildConnector({
    timeout: opts.connectTimeoutMs ?? 10_000,
    lookup: createGuardedLookup(opts),
  });
  const connect: buildConnector.connector = (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host)) {
      const reason = isForbiddenAddress(host, policy);
      if (reason) {
        callback(new ForbiddenAddressError(host, host, reason), null);
        return;
      }
    }
    base(options, callback);
  };
  return new Agent({ connect });
}

const shared = new Map<boolean, Agent>();

/** One long-lived guarded Agent per policy, so connections are pooled across requests. */
export function sharedGuardedDispatcher(denyPrivate: boolean): Agent {
  let agent = shared.get(denyPrivate);
  if (!agent) {
    agent = createGuardedDispatcher({ denyPrivate });
    shared.set(denyPrivate, agent);
  }
  return agent;
}
