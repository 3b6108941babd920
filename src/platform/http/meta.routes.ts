// Service-level routes outside /messenger: a status answer with the version, metrics, and a health check of the store.
import type { FastifyPluginAsync } from 'fastify';
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
}

export const metaRoutes: FastifyPluginAsync<MetaRoutesOptions> = async (app, { serverUrl, store, logger, metrics }) => {
  app.get('/', { config: { access: 'public' }, schema: { hide: true } }, async () => ({
    status: 200,
    message: 'Welcome to Switchboard, the Evolution API v2 compatible messaging gateway. The API is under /messenger.',
    version,
    documentation: `${serverUrl}/messenger/docs`,
  }));

  if (metrics) {
    app.get('/metrics', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
      const body = await metrics.metrics();
      return reply.type(metrics.contentType).send(body);
    });
  }

  app.get('/health', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
    try {
      await store.ping();
      return { status: 'ok', store: store.dialect, version };
    } catch (error) {
      logger.error({ err: error }, 'health check: store unreachable');
      return reply.status(503).send({ status: 'error', store: 'unreachable', version });
    }
  });
};
