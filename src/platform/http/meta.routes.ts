// Service-level routes outside /messenger: a status answer with the version, and a health check of the store.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../services.js';
import { version } from '../version.js';

export const metaRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get('/', { config: { access: 'public' }, schema: { hide: true } }, async () => ({
    status: 200,
    message: 'Welcome to Switchboard, the Evolution API v2 compatible messaging gateway. The API is under /messenger.',
    version,
    documentation: `${services.config.serverUrl}/messenger/docs`,
  }));

  if (services.config.metricsEnabled) {
    app.get('/metrics', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
      const body = await services.metrics.registry.metrics();
      return reply.type(services.metrics.registry.contentType).send(body);
    });
  }

  app.get('/health', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
    try {
      await services.store.ping();
      return { status: 'ok', store: services.store.dialect, version };
    } catch (error) {
      services.logger.error({ err: error }, 'health check: store unreachable');
      return reply.status(503).send({ status: 'error', store: 'unreachable', version });
    }
  });
};
