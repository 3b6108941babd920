// Instance management routes: create, list, connect, state, restart, logout, delete.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Services } from '../services.js';
import { invalidInput, forbidden, notFound } from '../core/errors.js';
import { pathInstance } from '../platform/http/auth.js';
import { createdAnswer, InstanceParams, settingsFields } from '../platform/http/schemas.js';
import { defaultSettings, instanceNameProblem, integrations, mergeSettings, settingsSnake, type Instance, type Integration } from '../core/instance.js';
import type { SinkCreation } from '../core/event-sink.js';
import type { QrState } from '../core/connector.js';

const CreateBody = Type.Object({
  instanceName: Type.String({ description: '1–64 letters, digits, "-", "_" or ".", starting with a letter or digit' }),
  integration: Type.Optional(Type.Enum([...integrations], { default: 'WHATSAPP-BAILEYS' })),
  token: Type.Optional(Type.String({ description: 'Instance API key to use (16+ characters); for WHATSAPP-BUSINESS the Meta access token' })),
  qrcode: Type.Optional(Type.Boolean()),
  number: Type.Optional(Type.String()),
  businessId: Type.Optional(Type.String()),
  ...settingsFields,
});

const FetchQuery = Type.Object({
  instanceName: Type.Optional(Type.String()),
  instanceId: Type.Optional(Type.String()),
});

function qrAnswer(qr: QrState | null) {
  return qr ? { pairingCode: qr.pairingCode, code: qr.code, base64: qr.base64, count: qr.count } : { count: 0 };
}

export const instanceRoutes: FastifyPluginAsyncTypebox<{ services: Services; sinkCreation: SinkCreation }> = async (app, { services, sinkCreation }) => {
  const { registry, runtime, instances, config } = services;
  // The event sinks' creation fields join the body schema; the handler reads them only through sinkCreation.
  const createBody = Type.Object({ ...CreateBody.properties, ...sinkCreation.fields }) as unknown as typeof CreateBody;

  const present = (instance: Instance) => {
    const linked = instance.status === 'open';
    return {
      instance: {
        instanceName: instance.name,
        instanceId: instance.id,
        ...(linked
          ? {
              owner: instance.ownerJid ?? '',
              profileName: instance.profileName ?? '',
              profilePictureUrl: instance.profilePicUrl,
              profileStatus: instance.profileStatus ?? '',
            }
          : {}),
        status: linked ? 'open' : 'close',
        serverUrl: config.serverUrl,
        apikey: registry.apikeyOf(instance),
        integration: {
          integration: instance.integration,
          ...(instance.integration === 'WHATSAPP-BUSINESS' ? { webhook_wa_business: `${config.serverUrl}/messenger/webhook/meta` } : {}),
        },
      },
    };
  };

  app.post(
    '/instance/create',
    { config: { access: 'global' }, schema: { tags: ['instance'], summary: 'Create an instance', body: createBody, response: createdAnswer('{instance: {instanceName, instanceId, integration, webhook_wa_business, access_token_wa_business, status: "created"}, hash: {apikey}, settings, qrcode?}') } },
    async (request, reply) => {
      const body = request.body;
      const problem = instanceNameProblem(body.instanceName);
      if (problem) throw invalidInput(problem);
      const integration: Integration = body.integration ?? 'WHATSAPP-BAILEYS';
      const sinks = sinkCreation.parse(body as Record<string, unknown>, body.instanceName);
      const settings = mergeSettings(defaultSettings, body);
      const autoLink = integration === 'SANDBOX' && config.sandboxAutoLink;
      // A number that cannot be linked is refused before the instance exists (a 400 leaves nothing behind).
      if (autoLink && body.number !== undefined) services.sandbox.checkAutoLinkNumber(body.number);
      const { instance, apikey } = await instances.create({
        name: body.instanceName,
        integration,
        token: body.token,
        number: body.number,
        businessId: body.businessId,
        settings,
        sinks,
      });
      let qrcode: ReturnType<typeof qrAnswer> | undefined;
      if (autoLink) {
        try {
          await services.sandbox.autoLink(instance, body.number);
        } catch (error) {
          // Another instance took the number meanwhile: the refused create leaves no instance behind.
          await instances.remove(instance);
          throw error;
        }
      } else if (integration === 'EVOLUTION' || integration === 'WHATSAPP-BUSINESS' || body.qrcode) {
        const connector = await runtime.connect(instance);
        if (body.qrcode) qrcode = qrAnswer(connector.qr());
      }
      services.logger.info({ instance: instance.name, integration }, 'instance created');
      return reply.status(201).send({
        instance: {
          instanceName: instance.name,
          instanceId: instance.id,
          integration,
          webhook_wa_business: integration === 'WHATSAPP-BUSINESS' ? `${config.serverUrl}/messenger/webhook/meta` : null,
          access_token_wa_business: integration === 'WHATSAPP-BUSINESS' ? services.cloudApi.verifyToken : '',
          status: 'created',
        },
        hash: { apikey },
        settings: settingsSnake(settings),
        ...(qrcode ? { qrcode } : {}),
      });
    },
  );

  app.get(
    '/instance/fetchInstances',
    { config: { access: 'any-key' }, schema: { tags: ['instance'], summary: 'List instances', querystring: FetchQuery } },
    async (request) => {
      const { instanceName, instanceId } = request.query;
      const principal = request.principal;
      if (principal?.kind === 'instance') {
        const own = registry.byInstanceId(principal.instance.id) ?? principal.instance;
        if ((instanceName && instanceName !== own.name) || (instanceId && instanceId !== own.id)) {
          throw forbidden(`the API key does not grant access to instance "${instanceName ?? instanceId}"`);
        }
        return [present(own)];
      }
      let list = registry.all();
      if (instanceName) list = list.filter((i) => i.name === instanceName);
      if (instanceId) list = list.filter((i) => i.id === instanceId);
      if ((instanceName || instanceId) && list.length === 0) {
        const both = instanceName && instanceId && registry.byInstanceName(instanceName);
        throw notFound(both ? `Instance "${instanceName}" does not have the id "${instanceId}"` : `Instance "${instanceName ?? instanceId}" not found`);
      }
      return list.map(present);
    },
  );

  const withInstance = { config: { access: 'instance' as const } };

  app.get(
    '/instance/connect/:instance',
    { ...withInstance, schema: { tags: ['instance'], summary: 'Connect (returns the QR code while linking)', params: InstanceParams, querystring: Type.Object({ number: Type.Optional(Type.String()) }) } },
    async (request) => {
      let instance = pathInstance(request);
      // A number asks for a pairing code (WhatsApp Web) instead of scanning the QR code. Other kinds keep their stored
      // number (WHATSAPP-BUSINESS: the phone-number id; EVOLUTION: the routing id), whatever the query says.
      if (instance.integration === 'WHATSAPP-BAILEYS' && request.query.number && request.query.number !== instance.number) {
        instance = await instances.updateNumber(instance, request.query.number);
      }
      const connector = await runtime.connect(instance);
      if (connector.state() === 'open') {
        return { instance: { instanceName: instance.name, state: 'open' } };
      }
      return qrAnswer(connector.qr());
    },
  );

  app.get(
    '/instance/connectionState/:instance',
    { ...withInstance, schema: { tags: ['instance'], summary: 'Connection state', params: InstanceParams } },
    async (request) => {
      const instance = pathInstance(request);
      const connector = runtime.connectorOf(instance.id);
      const state = connector?.state() ?? instance.status;
      // Truthful health: when the connection last heard from the messenger (traffic or keep-alive).
      const heard = connector?.lastActivityAt?.() ?? null;
      return { instance: { instanceName: instance.name, state, ...(heard !== null ? { lastActivityAt: new Date(heard).toISOString() } : {}) } };
    },
  );

  app.post(
    '/instance/restart/:instance',
    { ...withInstance, schema: { tags: ['instance'], summary: 'Restart the connection', params: InstanceParams } },
    async (request) => {
      const instance = pathInstance(request);
      const connector = await runtime.restart(instance);
      if (connector.state() === 'open') return { instance: { instanceName: instance.name, state: 'open' } };
      return qrAnswer(connector.qr());
    },
  );

  app.delete(
    '/instance/logout/:instance',
    { ...withInstance, schema: { tags: ['instance'], summary: 'Log out (unlink the account)', params: InstanceParams } },
    async (request) => {
      const instance = pathInstance(request);
      const state = runtime.connectorOf(instance.id)?.state() ?? 'close';
      if (state === 'close') throw invalidInput(`The "${instance.name}" instance is not connected`);
      await runtime.logout(instance);
      return { status: 'SUCCESS', error: false, response: { message: 'Instance logged out' } };
    },
  );

  app.delete(
    '/instance/delete/:instance',
    { ...withInstance, schema: { tags: ['instance'], summary: 'Delete an instance and everything stored for it', params: InstanceParams } },
    async (request) => {
      const instance = pathInstance(request);
      await instances.remove(instance);
      services.logger.info({ instance: instance.name }, 'instance deleted');
      return { status: 'SUCCESS', error: false, response: { message: 'Instance deleted' } };
    },
  );
};
