// Instance management routes: create, list, connect, state, restart, logout, delete.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { invalidInput } from '../core/errors.js';
import { pathInstance } from '../platform/http/auth.js';
import { createdAnswer, ErrorEnvelope, InstanceParams, Nullable, SuccessEnvelope, sentAsBuilt, settingsFields, withExample } from '../platform/http/schemas.js';
import { defaultSettings, instanceNameProblem, mergeSettings, settingsSnake, type Instance } from '../core/instance.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import type { SinkCreation } from '../core/event-sink.js';
import type { ConnectionProblem, QrState } from '../core/connector.js';
import type { ConnectionAnswer, InstanceService } from './service.js';
import type { InstanceRegistry } from './registry.js';
import type { Logger } from '../platform/logger.js';
import { pacingField } from './pacing-field.js';

export interface InstanceRouteOptions {
  instances: InstanceService;
  /** Keys are answered to callers entitled to them. */
  keys: Pick<InstanceRegistry, 'apikeyOf'>;
  kinds: ConnectorKinds;
  /** The destinations a create may ask for (webhook, websocket, brokers…): their body fields and parser. */
  sinkCreation: SinkCreation;
  /** Read at each answer (a test learns its port after building the app). */
  serverUrl: () => string;
  logger: Logger;
}

function createBody(kinds: ConnectorKinds, sinkCreation: SinkCreation) {
  return Type.Object({
    instanceName: Type.String({ description: '1–64 letters, digits, "-", "_" or ".", starting with a letter or digit' }),
    integration: Type.Optional(Type.Enum([...kinds.names], { default: kinds.names[0] })),
    token: Type.Optional(Type.String({ description: 'Instance API key to use (16+ characters); for WHATSAPP-BUSINESS the Meta access token' })),
    qrcode: Type.Optional(Type.Boolean()),
    number: Type.Optional(Type.String()),
    businessId: Type.Optional(Type.String()),
    ...settingsFields,
    ...pacingField,
    ...proxyCreationFields,
    ...sinkCreation.fields,
  });
}

/** Why a connection is not open, while that holds (as the `connection.update` events name it). */
const problemSchema = {
  reason: Type.Optional(Type.String({ description: 'Why the connection is not open (e.g. WhatsApp Web cannot be reached), while that holds' })),
  statusReason: Type.Optional(Type.Integer({ description: "The messenger's code for it (Baileys: 408 network, 428 closed, …)" })),
};

const ConnectionStateSchema = Type.Union([Type.Literal('open'), Type.Literal('connecting'), Type.Literal('close')]);

const QrAnswer = Type.Object(
  {
    pairingCode: Type.Optional(Nullable(Type.String({ description: 'The code to type on the phone, when linking with a number' }))),
    code: Type.Optional(Type.String({ description: 'The text the QR code encodes' })),
    base64: Type.Optional(Type.String({ description: 'The QR code as a PNG data URL' })),
    count: Type.Integer({ description: 'QR codes shown so far; 0 when none is showing' }),
    ...problemSchema,
  },
  { description: 'The QR code while linking' },
);

const OpenAnswer = Type.Object(
  { instance: Type.Object({ instanceName: Type.String(), state: Type.Literal('open') }) },
  { description: 'The connection is open (linked)' },
);

const ConnectAnswers = {
  200: Type.Union([OpenAnswer, QrAnswer], { description: 'Open, or the QR code (and pairing code) to link with' }),
  503: { ...ErrorEnvelope, description: 'The messenger cannot be reached (or a pairing code asked for cannot be had): the reason, then what happens next' },
};

const ListedInstance = Type.Object({
  instance: Type.Object(
    {
      instanceName: Type.String(),
      instanceId: Type.String(),
      owner: Type.Optional(Type.String({ description: 'Address of the linked account (linked instances only)' })),
      profileName: Type.Optional(Type.String()),
      profilePictureUrl: Type.Optional(Nullable(Type.String())),
      profileStatus: Type.Optional(Type.String()),
      status: Type.Union([ConnectionStateSchema], { description: 'The live state, the same one connectionState answers' }),
      ...problemSchema,
      serverUrl: Type.String(),
      apikey: Type.String({ description: 'The instance key (with the global key, or the own key)' }),
      integration: Type.Object({ integration: Type.String() }, { additionalProperties: true }),
    },
    { additionalProperties: true },
  ),
});

const StateAnswer = Type.Object({
  instance: Type.Object({
    instanceName: Type.String(),
    state: ConnectionStateSchema,
    ...problemSchema,
    lastActivityAt: Type.Optional(Type.String({ description: 'When the connection last heard from the messenger (ISO time)' })),
  }),
});

/** Evolution's flat proxy fields of a create (see proxy/set for their meaning). */
const proxyCreationFields = {
  proxyHost: Type.Optional(Type.String({ description: "The proxy's host name or IP address; with proxyPort and proxyProtocol the instance's proxy" })),
  proxyPort: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: '1-65535, as a string or an integer' })),
  proxyProtocol: Type.Optional(Type.String({ description: 'http, https, socks4 or socks5' })),
  proxyUsername: Type.Optional(Type.String()),
  proxyPassword: Type.Optional(Type.String({ description: 'Stored sealed; never answered' })),
};

const FetchQuery = Type.Object({
  instanceName: Type.Optional(Type.String()),
  instanceId: Type.Optional(Type.String()),
});

function qrAnswer(qr: QrState | null, problem?: ConnectionProblem | null) {
  if (qr) return { pairingCode: qr.pairingCode, code: qr.code, base64: qr.base64, count: qr.count };
  return { count: 0, ...problemFields(problem ?? null) };
}

/** Why a connection is not open, as the state, the list and the `connection.update` events name it. */
function problemFields(problem: ConnectionProblem | null) {
  return problem ? { reason: problem.reason, statusReason: problem.statusCode } : {};
}

function connectionAnswer(instance: Instance, answer: ConnectionAnswer) {
  return answer.state === 'open' ? { instance: { instanceName: instance.name, state: 'open' as const } } : qrAnswer(answer.qr);
}

export const instanceRoutes: FastifyPluginAsyncTypebox<InstanceRouteOptions> = async (app, { instances, keys, kinds, sinkCreation, serverUrl, logger }) => {
  const present = (instance: Instance) => {
    // The live state, the same one connectionState answers at the same moment (with its reason when not open).
    const live = instances.connectionState(instance);
    const linked = live.state === 'open';
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
        status: live.state,
        ...problemFields(live.problem),
        serverUrl: serverUrl(),
        apikey: keys.apikeyOf(instance),
        integration: { integration: instance.integration, ...kinds.of(instance.integration)?.listingAnswer?.(instance) },
      },
    };
  };

  app.post(
    '/instance/create',
    {
      config: { access: 'global' },
      schema: {
        tags: ['instance'],
        summary: 'Create an instance',
        body: withExample(createBody(kinds, sinkCreation), {
          instanceName: 'shop-1',
          integration: 'SANDBOX',
          qrcode: true,
          rejectCall: false,
          groupsIgnore: true,
          readMessages: false,
          webhook: { url: 'http://localhost:9000/hooks', byEvents: false, base64: false, events: ['MESSAGES_UPSERT', 'MESSAGES_UPDATE', 'CONNECTION_UPDATE'] },
        }),
        response: createdAnswer(
          '{instance: {instanceName, instanceId, integration, webhook_wa_business, access_token_wa_business, status: "created"}, hash: {apikey}, settings, qrcode?}',
        ),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const problem = instanceNameProblem(body.instanceName);
      if (problem) throw invalidInput(problem);
      const sinks = sinkCreation.parse(body, body.instanceName);
      const settings = mergeSettings(defaultSettings, body);
      const created = await instances.create({
        name: body.instanceName,
        integration: body.integration ?? kinds.names[0],
        token: body.token,
        number: body.number,
        businessId: body.businessId,
        qrcode: body.qrcode,
        settings,
        pacing: body.pacing,
        sinks,
        proxy: {
          host: body.proxyHost,
          port: body.proxyPort,
          protocol: body.proxyProtocol,
          username: body.proxyUsername,
          password: body.proxyPassword,
        },
      });
      const { instance, apikey } = created;
      return reply.status(201).send({
        instance: {
          instanceName: instance.name,
          instanceId: instance.id,
          integration: instance.integration,
          webhook_wa_business: null,
          access_token_wa_business: '',
          ...kinds.of(instance.integration)?.creationAnswer?.(instance),
          status: 'created',
        },
        hash: { apikey },
        // The pacing in effect when the create chose some (a Switchboard extension).
        settings: { ...settingsSnake(settings), ...(body.pacing ? { pacing: instances.pacingOf(instance) } : {}) },
        ...('qrcode' in created ? { qrcode: qrAnswer(created.qrcode ?? null, created.problem) } : {}),
      });
    },
  );

  app.get(
    '/instance/fetchInstances',
    {
      config: { access: 'any-key' },
      ...sentAsBuilt,
      schema: {
        tags: ['instance'],
        summary: 'List instances',
        querystring: FetchQuery,
        response: { 200: Type.Array(ListedInstance, { description: 'The instances (with an instance key: its own)' }) },
      },
    },
    async (request) => {
      const principal = request.principal;
      return instances.find(request.query, principal?.kind === 'instance' ? principal.instance : undefined).map(present);
    },
  );

  // Every route of one instance here reaches its live connection: served by the node owning the instance.
  const withInstance = { config: { access: 'instance' as const, live: true } };

  app.get(
    '/instance/connect/:instance',
    {
      ...withInstance,
      ...sentAsBuilt,
      schema: {
        tags: ['instance'],
        summary: 'Connect (returns the QR code while linking)',
        params: InstanceParams,
        querystring: Type.Object({ number: Type.Optional(Type.String({ description: 'Link with a pairing code for this phone number' })) }),
        response: ConnectAnswers,
      },
    },
    async (request) => {
      const instance = pathInstance(request);
      return connectionAnswer(instance, await instances.connect(instance, request.query.number));
    },
  );

  app.get(
    '/instance/connectionState/:instance',
    { ...withInstance, ...sentAsBuilt, schema: { tags: ['instance'], summary: 'Connection state', params: InstanceParams, response: { 200: StateAnswer } } },
    async (request) => {
      const instance = pathInstance(request);
      const { state, lastActivityAt: heard, problem } = instances.connectionState(instance);
      return {
        instance: {
          instanceName: instance.name,
          state,
          ...problemFields(problem),
          ...(heard !== null ? { lastActivityAt: new Date(heard).toISOString() } : {}),
        },
      };
    },
  );

  app.post(
    '/instance/restart/:instance',
    { ...withInstance, ...sentAsBuilt, schema: { tags: ['instance'], summary: 'Restart the connection', params: InstanceParams, response: ConnectAnswers } },
    async (request) => {
      const instance = pathInstance(request);
      return connectionAnswer(instance, await instances.restart(instance));
    },
  );

  app.delete(
    '/instance/logout/:instance',
    {
      ...withInstance,
      ...sentAsBuilt,
      schema: { tags: ['instance'], summary: 'Log out (unlink the account)', params: InstanceParams, response: { 200: SuccessEnvelope } },
    },
    async (request) => {
      await instances.logout(pathInstance(request));
      return { status: 'SUCCESS' as const, error: false as const, response: { message: 'Instance logged out' } };
    },
  );

  app.delete(
    '/instance/delete/:instance',
    {
      ...withInstance,
      ...sentAsBuilt,
      schema: { tags: ['instance'], summary: 'Delete an instance and everything stored for it', params: InstanceParams, response: { 200: SuccessEnvelope } },
    },
    async (request) => {
      const instance = pathInstance(request);
      await instances.remove(instance);
      logger.info({ instance: instance.name }, 'instance deleted');
      return { status: 'SUCCESS' as const, error: false as const, response: { message: 'Instance deleted' } };
    },
  );
};
