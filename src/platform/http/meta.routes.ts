// Service-level routes outside /messenger: a status answer with the version, metrics, and a health check of the store.
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { rawAnswer, sentAsBuilt } from './schemas.js';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import { version } from '../version.js';

export interface MetaRoutesOptions {
  serverUrl: string;
  store: Pick<Store, 'ping' | 'dialect'>;
  logger: Logger;
  /** The Prometheus registry served at /metrics; absent when METRICS_ENABLED is off. */
  metrics?: Registry;
  /** This node's instances for GET /health: how many it owns, and how many of them are still waiting to be opened. */
  instances?: () => { owned: number; opening: number };
}

export const metaRoutes: FastifyPluginAsync<MetaRoutesOptions> = async (app, { serverUrl, store, logger, metrics, instances }) => {
  const publicRoute = (summary: string, response: Record<number, unknown>) => ({
    config: { access: 'public' as const },
    ...sentAsBuilt,
    schema: { tags: ['service'], summary, security: [], response },
  });

  app.get(
    '/',
    publicRoute('Welcome: the version and where the docs are', {
      200: Type.Object({ status: Type.Literal(200), message: Type.String(), version: Type.String(), documentation: Type.String() }),
    }),
    async () => ({
      status: 200,
      message: 'Welcome to Switchboard, the Evolution API v2 compatible messaging gateway. The API is under /messenger.',
      version,
      documentation: `${serverUrl}/messenger/docs`,
    }),
  );

  if (metrics) {
    const metricsAnswer = rawAnswer('text/plain', 'Prometheus metrics (text exposition format): process_*, nodejs_* and switchboard_*');
    app.get('/metrics', publicRoute('Prometheus metrics (METRICS_ENABLED)', { 200: metricsAnswer }), async (_request, reply) => {
      const body = await metrics.metrics();
      return reply.type(metrics.contentType).send(body);
    });
  }

  const Health = Type.Object({
    status: Type.String({ description: 'ok, or error' }),
    store: Type.String({ description: 'sqlite, postgres, or unreachable' }),
    version: Type.String(),
    instances: Type.Optional(
      Type.Object(
        {
          owned: Type.Integer({ description: 'Instances this node owns (all of them on a one-node store)' }),
          opening: Type.Integer({
            description: 'Owned instances not started yet: after a start or a takeover they open in the background; 0 once every one was started',
          }),
        },
        { description: "This node's instances; answered while the store answers" },
      ),
    ),
  });
  const healthAnswers = { 200: { ...Health, description: 'The store answers' }, 503: { ...Health, description: 'The store does not answer' } };
  app.get(
    '/health',
    publicRoute(
      'Health: 200 when the store answers, 503 otherwise (for load balancers and Docker). Answers as soon as the node listens; `instances.opening` tells how many owned instances are still waiting to be opened',
      healthAnswers,
    ),
    async (_request, reply) => {
      try {
        await store.ping();
        return { status: 'ok', store: store.dialect, version, ...(instances ? { instances: instances() } : {}) };
      } catch (error) {
        logger.error({ err: error }, 'health check: store unreachable');
        return reply.status(503).send({ status: 'error', store: 'unreachable', version });
      }
    },
  );
};
