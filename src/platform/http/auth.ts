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
    principal?: { kind: 'global' } | { kind: 'instance'; instance: Instance };
    /** The instance named in the path, resolved after authentication. */
    instance?: Instance;
  }
}

/** How authentication finds instances: by the SHA-256 of their key, and by name. */
export interface InstanceKeyLookup {
  byKeyDigest(hex: string): Instance | undefined;
  byInstanceName(name: string): Instance | undefined;
}

export function registerAuth(app: FastifyInstance, globalKey: string, registry: InstanceKeyLookup): void {
  const globalDigest = keyDigest(globalKey);
  const digests = new KnownKeyDigests();
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const rule: AccessRule = request.routeOptions.config?.access ?? 'public';
    if (rule === 'public') return;
    const header = request.headers.apikey;
    const key = Array.isArray(header) ? header[0] : header;
    if (!key) throw unauthenticated();
    // Digests of equal length compared in constant time; instance keys are found by their SHA-256 (no secret compared).
    const digest = digests.of(key);
    if (timingSafeEqual(digest.bytes, globalDigest)) {
      request.principal = { kind: 'global' };
    } else {
      const owner = registry.byKeyDigest(digest.hex);
      if (!owner) throw unauthenticated();
      request.principal = { kind: 'instance', instance: owner };
    }
    digests.remember(key, digest);
    if (rule === 'global' && request.principal.kind !== 'global') {
      throw forbidden('this operation needs the global API key');
    }
    if (rule === 'instance') {
      const name = (request.params as { instance?: string }).instance ?? '';
      if (request.principal.kind === 'instance') {
        if (request.principal.instance.name !== name) {
          throw forbidden(`the API key does not grant access to instance "${name}"`);
        }
        request.instance = request.principal.instance;
      } else {
        const instance = registry.byInstanceName(name);
        if (!instance) throw notFound(`The "${name}" instance does not exist`);
        request.instance = instance;
      }
    }
  });
}

/** The path's instance on an `instance` route (set by the auth hook). */
export function pathInstance(request: FastifyRequest): Instance {
  const instance = request.instance;
  if (!instance) throw new Error('route is missing access: "instance"');
  return instance;
}
