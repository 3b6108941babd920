// Broker event settings of an instance: `POST /rabbitmq/set/{instance}`, `GET /rabbitmq/find/{instance}`, and the same for NATS.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pathInstance } from '../../platform/http/auth.js';
import { createdAnswer, InstanceParams } from '../../platform/http/schemas.js';
import { parseSinkRequest } from '../sink-input.js';
import type { Services } from '../../services.js';

const BrokerInput = Type.Object(
  {
    enabled: Type.Boolean(),
    events: Type.Optional(Type.Array(Type.String(), { description: 'Event names (MESSAGES_UPSERT or messages.upsert); empty or absent: all events' })),
  },
  { description: 'Broker settings (unknown keys are ignored)' },
);

const kinds = [
  { kind: 'rabbitmq', label: 'RabbitMQ', where: 'the topic exchange named after the instance (routing key = event)' },
  { kind: 'nats', label: 'NATS', where: 'the subjects <instance>.<event> (JetStream)' },
] as const;

export const brokerRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  for (const { kind, label, where } of kinds) {
    app.post(
      `/${kind}/set/:instance`,
      {
        config: { access: 'instance' },
        schema: {
          tags: [kind],
          summary: `Set which events the instance publishes to ${where}`,
          params: InstanceParams,
          body: Type.Object({ [kind]: BrokerInput }),
          response: createdAnswer(`{${kind}: {instanceName, ${kind}: {enabled, events}}}`),
        },
      },
      async (request, reply) => {
        const instance = pathInstance(request);
        // The body schema requires the key named after the kind; TypeBox cannot type a computed key.
        const input = (request.body as Record<string, { enabled: boolean; events?: string[] }>)[kind];
        const parsed = parseSinkRequest(kind, input, kind, services, instance.name);
        await services.instances.setSink(instance, kind, parsed.config);
        return reply.status(201).send({
          [kind]: { instanceName: instance.name, [kind]: { enabled: parsed.config.enabled, events: parsed.config.events } },
        });
      },
    );

    app.get(
      `/${kind}/find/:instance`,
      {
        config: { access: 'instance' },
        schema: { tags: [kind], summary: `The instance ${label} settings (null when none)`, params: InstanceParams },
      },
      async (request) => {
        const config = services.sinks.get(pathInstance(request).id, kind);
        return config ? { enabled: config.enabled, events: config.events } : null;
      },
    );
  }
};
