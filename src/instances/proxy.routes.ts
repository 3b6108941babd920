// The proxy routes: set an instance's proxy (or turn it off) and find it; the password is never answered.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { maskedPassword, proxyProtocols } from '../core/proxy.js';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams, withExample } from '../platform/http/schemas.js';
import type { StoredProxy } from './proxies.js';
import type { ProxyService } from './proxy-service.js';

const protocols = `${proxyProtocols.join(', ')} (Evolution's socks is taken as socks5)`;

const ProxyBody = withExample(
  Type.Object({
    enabled: Type.Optional(Type.Boolean({ description: 'false turns the proxy off (the other fields are then not needed); default true' })),
    host: Type.Optional(Type.String({ description: "The proxy's host name or IP address, without a scheme" })),
    port: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: '1-65535, as a string (as Evolution sends it) or an integer' })),
    protocol: Type.Optional(Type.String({ description: protocols })),
    username: Type.Optional(Type.String()),
    password: Type.Optional(Type.String({ description: `Stored sealed and never answered; "${maskedPassword}" (what find answers) keeps the stored one` })),
  }),
  { enabled: true, host: 'proxy.example.com', port: '3128', protocol: 'http', username: 'switchboard', password: 'proxy-password' },
);

const ProxyFields = {
  enabled: Type.Boolean(),
  host: Type.String(),
  port: Type.String({ description: 'As a string, as Evolution answers it; empty when off' }),
  protocol: Type.String({ description: `${proxyProtocols.join(', ')}; empty when off` }),
  username: Type.String(),
  password: Type.String({ description: `"${maskedPassword}" when a password is stored, else empty: the password is never answered` }),
};

const SetAnswer = Type.Object(
  { proxy: Type.Object({ instanceName: Type.String(), proxy: Type.Object(ProxyFields) }) },
  { description: 'The proxy as stored (the password masked)' },
);

const FindAnswer = Type.Union(
  [
    Type.Object({
      ...ProxyFields,
      instanceId: Type.String(),
      createdAt: Type.String({ format: 'date-time' }),
      updatedAt: Type.String({ format: 'date-time' }),
    }),
    Type.Null(),
  ],
  { description: "The instance's proxy (the password masked), or null when it never had one" },
);

function fields(stored: StoredProxy) {
  return {
    enabled: stored.enabled,
    host: stored.host,
    port: stored.port === null ? '' : String(stored.port),
    protocol: stored.protocol,
    username: stored.username ?? '',
    password: stored.hasPassword ? maskedPassword : '',
  };
}

export const proxyRoutes: FastifyPluginAsyncTypebox<{ proxies: Pick<ProxyService, 'set' | 'find'> }> = async (app, { proxies }) => {
  app.post(
    '/proxy/set/:instance',
    {
      // A running connection reconnects through the new proxy: served by the node owning the instance.
      config: { access: 'instance', live: true },
      schema: {
        tags: ['proxy'],
        summary: "Set the instance's proxy (everything it sends out goes through it), or turn it off",
        description:
          'The proxy is checked (a TCP connection) before it is stored: one that cannot be reached is a 400 and nothing changes. A running WhatsApp Web connection reconnects through the new proxy.',
        params: InstanceParams,
        body: ProxyBody,
        response: { 201: SetAnswer },
      },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      const stored = await proxies.set(instance, request.body);
      return reply.status(201).send({ proxy: { instanceName: instance.name, proxy: fields(stored) } });
    },
  );

  app.get(
    '/proxy/find/:instance',
    {
      config: { access: 'instance' },
      schema: { tags: ['proxy'], summary: "The instance's proxy (the password masked)", params: InstanceParams, response: { 200: FindAnswer } },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      const stored = await proxies.find(instance);
      if (!stored) return reply.type('application/json').send(null);
      return {
        ...fields(stored),
        instanceId: stored.instanceId,
        createdAt: new Date(stored.createdAt).toISOString(),
        updatedAt: new Date(stored.updatedAt).toISOString(),
      };
    },
  );
};
