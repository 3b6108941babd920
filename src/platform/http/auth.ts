// Authentication and authorisation from route metadata: the `apikey` header, checked before any instance lookup.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden, notFound, unauthenticated } from '../../core/errors.js';
import { timingSafeEqual } from 'node:crypto';
import { keyDigest, KnownKeyDigests } from '../util/api-keys.js';
import type { Instance } from '../../core/instance.js';

/** Who may call a route: anyone, the global key only, or the global key or the key of the instance in the path. */
type AccessRule = 'public' | 'global' | 'instance' | 'any-key';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessRule;
  }
  interface FastifyRequest {
    /** `global` or `instance` once authenticated. */
    principal?: Principal;
    /** Set once the `apikey` header has been checked, whether or not it named a principal. */
    apiKeyChecked?: true;
    /** The instance named in the path, resolved after authentication. */
    instance?: Instance;
  }
}

/** Who a valid `apikey` header names. */
export type Principal = { kind: 'global' } | { kind: 'instance'; instance: Instance };

/** How authentication finds instances: by the SHA-256 of their key, and by name. */
export interface InstanceKeyLookup {
  byKeyDigest(hex: string): Instance | undefined;
  byInstanceName(name: string): Instance | undefined;
}

/** Whether a route needs no key (`/`, `/health`, `/metrics`, the docs…): no key is read on it. */
export function isPublicRoute(request: FastifyRequest): boolean {
  return (request.routeOptions.config?.access ?? 'public') === 'public';
}

/**
 * Finds who a request's `apikey` header names, once per request: the answer is kept on the request (`principal`,
 * `apiKeyChecked`), so the rate limiter, which meters callers before they are authorised, and the auth hook share one
 * digest of the key.
 */
export class ApiKeyCallers {
  private readonly globalDigest: Buffer;
  private readonly digests = new KnownKeyDigests();

  constructor(
    globalKey: string,
    private readonly registry: InstanceKeyLookup,
  ) {
    this.globalDigest = keyDigest(globalKey);
  }

  /** The principal the request's key names, or undefined when there is no key or it is not valid. */
  of(request: FastifyRequest): Principal | undefined {
    if (request.apiKeyChecked) return request.principal;
    request.apiKeyChecked = true;
    const header = request.headers.apikey;
    const key = Array.isArray(header) ? header[0] : header;
    if (!key) return undefined;
    // Digests of equal length compared in constant time; instance keys are found by their SHA-256 (no secret compared).
    const digest = this.digests.of(key);
    let principal: Principal;
    if (timingSafeEqual(digest.bytes, this.globalDigest)) {
      principal = { kind: 'global' };
    } else {
      const owner = this.registry.byKeyDigest(digest.hex);
      if (!owner) return undefined;
      principal = { kind: 'instance', instance: owner };
    }
    this.digests.remember(key, digest);
    request.principal = principal;
    return principal;
  }
}

export function registerAuth(app: FastifyInstance, callers: ApiKeyCallers, registry: Pick<InstanceKeyLookup, 'byInstanceName'>): void {
  const authorize = (request: FastifyRequest): void => {
    const rule: AccessRule = request.routeOptions.config?.access ?? 'public';
    if (rule === 'public') return;
    const principal = callers.of(request);
    if (!principal) throw unauthenticated();
    if (rule === 'global' && principal.kind !== 'global') {
      throw forbidden('this operation needs the global API key');
    }
    if (rule === 'instance') {
      const name = (request.params as { instance?: string }).instance ?? '';
      if (principal.kind === 'instance') {
        if (principal.instance.name !== name) {
          throw forbidden(`the API key does not grant access to instance "${name}"`);
        }
        request.instance = principal.instance;
      } else {
        const instance = registry.byInstanceName(name);
        if (!instance) throw notFound(`The "${name}" instance does not exist`);
        request.instance = instance;
      }
    }
  };
  // A callback hook, not an async one: it never waits, and a promise per request showed in profiles of sends.
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    let refused: Error | undefined;
    try {
      authorize(request);
    } catch (error) {
      refused = error as Error;
    }
    done(refused);
  });
}

/** The path's instance on an `instance` route (set by the auth hook). */
export function pathInstance(request: FastifyRequest): Instance {
  const instance = request.instance;
  if (!instance) throw new Error('route is missing access: "instance"');
  return instance;
}
