// GET /instance/activity: each instance's live state, last activity, queued sends and delivery trouble, with totals.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sentAsBuilt } from '../platform/http/schemas.js';
import type { Db } from '../platform/store/db.js';
import type { InstanceService } from '../instances/service.js';
import { activityFigures, type DeliveryCounts } from './activity.js';

export interface ActivityRouteOptions {
  instances: Pick<InstanceService, 'find' | 'connectionState'>;
  db: Db;
}

const none: DeliveryCounts = { pending: 0, failing: 0, dead: 0 };

export const activityRoutes: FastifyPluginAsyncTypebox<ActivityRouteOptions> = async (app, { instances, db }) => {
  app.get(
    '/instance/activity',
    {
      config: { access: 'any-key' },
      ...sentAsBuilt,
      schema: {
        response: {
          200: Type.Object(
            {
              instances: Type.Array(Type.Object({}, { additionalProperties: true })),
              totals: Type.Object({}, { additionalProperties: true }),
            },
            { description: 'Each instance the key may see, and the totals (fields in the description above)' },
          ),
        },
        tags: ['instance'],
        summary: 'Activity of every instance the key may see (a Switchboard extension): live state, last activity, queued sends, webhook deliveries',
        description:
          'Answers `{instances: [{instanceName, state, lastActivityAt, queuedSends, deliveries: {pending, failing, dead}}], totals: {queuedSends, deliveries, outboxLagSeconds}}`. `failing` deliveries are pending ones tried at least once; `outboxLagSeconds` is the age of the oldest delivery still waiting. An instance key sees its own instance only.',
      },
    },
    async (request) => {
      const principal = request.principal;
      const list = instances.find({}, principal?.kind === 'instance' ? principal.instance : undefined);
      const figures = await activityFigures(
        db,
        list.map((instance) => instance.id),
      );
      const rows = list.map((instance) => {
        const { state, lastActivityAt } = instances.connectionState(instance);
        return {
          instanceName: instance.name,
          state,
          lastActivityAt: lastActivityAt === null ? null : new Date(lastActivityAt).toISOString(),
          queuedSends: figures.queuedSends.get(instance.id) ?? 0,
          deliveries: figures.deliveries.get(instance.id) ?? none,
        };
      });
      const sum = (pick: (counts: DeliveryCounts) => number) => rows.reduce((total, row) => total + pick(row.deliveries), 0);
      return {
        instances: rows,
        totals: {
          queuedSends: rows.reduce((total, row) => total + row.queuedSends, 0),
          deliveries: { pending: sum((c) => c.pending), failing: sum((c) => c.failing), dead: sum((c) => c.dead) },
          outboxLagSeconds: figures.outboxLagSeconds,
        },
      };
    },
  );
};
