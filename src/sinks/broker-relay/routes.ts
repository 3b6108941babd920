// A broker's event settings of an instance: `POST /<kind>/set/{instance}`, `GET /<kind>/find/{instance}`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { SinkConfig, SinkKind, SinkRoutesOptions } from '../../core/event-sink.js';
import { pathInstance } from '../../platform/http/auth.js';
import { createdAnswer, InstanceParams, Nullable, sentAsBuilt, withExample } from '../../platform/http/schemas.js';
import type { SinkConfigs } from '../../events/sink-configs.js';
import type { BasicSinkInput } from '../sink-settings.js';

const BrokerInput = Type.Object(
  {
    enabled: Type.Boolean(),
    events: Type.Optional(Type.Array(Type.String(), { description: 'Event names (MESSAGES_UPSERT or messages.upsert); empty or absent: all events' })),
  },
  { description: 'Broker settings (unknown keys are ignored)' },
);

export interface BrokerRoutesDeps {
  kind: SinkKind;
  /** The broker's name as people read it (`RabbitMQ`). */
  label: string;
  /** Where an instance's events go on it, for the route summary. */
  where: string;
  settings: Pick<SinkConfigs, 'get'>;
  /** Checks the settings found at `field` for the instance and returns what is stored. */
  parse(input: BasicSinkInput, field: string, instanceName: string): SinkConfig;
}

export const brokerRoutes =
  ({ kind, label, where, settings, parse }: BrokerRoutesDeps): FastifyPluginAsyncTypebox<SinkRoutesOptions> =>
  async (app, { setSink }) => {
    app.post(
      `/${kind}/set/:instance`,
      {
        config: { access: 'instance' },
        schema: {
          tags: [kind],
          summary: `Set which events the instance publishes to ${where}`,
          params: InstanceParams,
          body: withExample(Type.Object({ [kind]: BrokerInput }), { [kind]: { enabled: false, events: ['MESSAGES_UPSERT'] } }),
          response: createdAnswer(`{${kind}: {instanceName, ${kind}: {enabled, events}}}`),
        },
      },
      async (request, reply) => {
        const instance = pathInstance(request);
        // The body schema requires the key named after the kind; TypeBox cannot type a computed key.
        const input = (request.body as Record<string, { enabled: boolean; events?: string[] }>)[kind];
        const config = parse(input, kind, instance.name);
        await setSink(instance, kind, config);
        return reply.status(201).send({
          [kind]: { instanceName: instance.name, [kind]: { enabled: config.enabled, events: config.events } },
        });
      },
    );

    app.get(
      `/${kind}/find/:instance`,
      {
        config: { access: 'instance' },
        ...sentAsBuilt,
        schema: {
          tags: [kind],
          summary: `The instance ${label} settings (null when none)`,
          params: InstanceParams,
          response: { 200: Nullable(Type.Object({ enabled: Type.Boolean(), events: Type.Array(Type.String()) }), { description: 'The settings, or null' }) },
        },
      },
      async (request) => {
        const config = settings.get(pathInstance(request).id, kind);
        return config ? { enabled: config.enabled, events: config.events } : null;
      },
    );
  };
