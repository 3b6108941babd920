// Assembles the HTTP app from its parts; tests build it the same way as the server does.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from './services.js';
import { ApiKeyCallers, registerAuth } from './platform/http/auth.js';
import { registerRateLimit } from './platform/http/rate-limit.js';
import { registerCors } from './platform/http/cors.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './platform/http/error-handler.js';
import { lazyRequestLoggers } from './platform/http/request-logger.js';
import { registerRequestContext, registerRequestIdHeader, requestIdOf } from './platform/http/request-id.js';
import { registerJsonBodyParser } from './platform/http/json-body.js';
import { documentErrorAnswers } from './platform/http/openapi-errors.js';
import { docsPageOptions, docsTitle } from './platform/http/docs-page.js';
import { instanceRoutes } from './instances/routes.js';
import { settingsRoutes } from './instances/settings.routes.js';
import { proxyRoutes } from './instances/proxy.routes.js';
import { sendRoutes } from './messages/send.routes.js';
import { chatRoutes } from './messages/chat.routes.js';
import { profileRoutes } from './instances/profile.routes.js';
import { historyRoutes } from './history/routes.js';
import { messageActionRoutes } from './messages/message-actions.routes.js';
import { labelRoutes } from './history/label.routes.js';
import { templateRoutes } from './messages/template.routes.js';
import { metaRoutes } from './platform/http/meta.routes.js';
import { defaultManagerRoot, managerPage } from './platform/http/manager-page.js';
import { activityRoutes } from './observability/activity.routes.js';
import { groupRoutes } from './groups/routes.js';
import { clusterRoutes } from './platform/cluster/routes.js';
import { registerLiveForwarding } from './platform/cluster/live-forwarding.js';
import { OwnerDirectory } from './platform/cluster/owner-directory.js';
import { version } from './platform/version.js';
import { attachWebsocket } from './sinks/websocket/index.js';
import type { SinkRoutesOptions } from './core/event-sink.js';

export async function buildApp(services: Services): Promise<FastifyInstance> {
  const { config } = services;
  const base = Fastify({
    // pino's Logger carries its level names as a type parameter; Fastify's logger type is the same object without it.
    loggerInstance: services.logger as unknown as FastifyBaseLogger,
    // Base64 media grows by a third; leave room for the rest of the body.
    bodyLimit: Math.ceil((config.mediaMaxBytes * 4) / 3) + 1024 * 1024,
    ajv: { customOptions: { coerceTypes: false, allErrors: true, removeAdditional: false, useDefaults: false } },
    routerOptions: { ignoreTrailingSlash: true },
    // Access lines ("incoming request", "request completed", "not found") only when debugging: the API is hot, and
    // handlers log what matters themselves. Switched off here rather than by a route log level, which would make
    // every request's child logger rebuild its log methods.
    logController: new LogController({ disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace' }),
    childLoggerFactory: lazyRequestLoggers,
    // The id is chosen by requestIdOf (a client's sane x-request-id, else a UUID), never taken from a header unchecked.
    requestIdHeader: false,
    genReqId: requestIdOf,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });
  base.removeContentTypeParser('text/plain');
  registerJsonBodyParser(base);
  registerErrorHandling(base);
  registerRequestIdHeader(base);
  registerRequestContext(base);
  registerCors(base, config.corsOrigin);
  base.addHook('onRequest', (_request, _reply, done) => {
    services.priority.noteRequest();
    done();
  });
  const callers = new ApiKeyCallers(services.globalApiKey, services.registry);
  await registerRateLimit(base, config, callers);
  registerAuth(base, callers, services.registry);
  // A fleet (PostgreSQL): routes needing the live connection are served by the instance's owner node. SQLite: one node.
  if (services.store.dialect === 'postgres') {
    const forwarding = registerLiveForwarding(base, {
      directory: new OwnerDirectory({
        db: services.store.db,
        self: services.nodes.incarnation,
        deadAfterMs: config.nodeDeadAfterMs,
        heldHere: (id) => services.lifecycle.ownsLocally(id),
      }),
      self: services.nodes.incarnation,
      // A dead owner's instances are taken over at the survivors' next beat: two beats and a margin.
      moveWaitMs: 2 * config.nodeHeartbeatMs + 1000,
      pollMs: Math.min(250, Math.max(25, Math.floor(config.nodeHeartbeatMs / 4))),
      retryAfterSeconds: Math.max(1, Math.ceil((2 * config.nodeHeartbeatMs) / 1000)),
      connectTimeoutMs: 2000,
      answerTimeoutMs: config.mediaFetchTimeoutMs + config.mediaConvertTimeoutMs + config.waWeb.connectTimeoutMs + 30_000,
      logger: services.logger,
    });
    base.addHook('onClose', () => forwarding.close());
  }
  documentErrorAnswers(base);
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const websocket = attachWebsocket(base, services, { enabled: config.websocketEnabled, globalEvents: config.websocketGlobalEvents });
  base.addHook('preClose', async () => {
    await websocket.close();
  });

  await app.register(swagger, {
    openapi: {
      info: {
        title: docsTitle,
        version,
        description:
          'Evolution API v2 compatible messaging gateway. Every route needs the `apikey` header (the global key, or an instance key for its own instance), except `/`, `/health`, these docs and the sandbox media files. Errors answer `{status, error, response: {message: [...]}}` with 400, 401, 403, 404, 413, 415, 422 or 431.',
      },
      components: { securitySchemes: { apikey: { type: 'apiKey', in: 'header', name: 'apikey' } } },
      security: [{ apikey: [] }],
    },
  });
  await app.register(swaggerUi, docsPageOptions('/messenger/docs'));

  await app.register(metaRoutes, {
    serverUrl: config.serverUrl,
    store: services.store,
    logger: services.logger,
    instances: () => ({ owned: services.lifecycle.ownedCount(), opening: services.lifecycle.openingCount() }),
    ...(config.metricsEnabled ? { metrics: services.metrics.registry } : {}),
  });
  await app.register(managerPage, { root: defaultManagerRoot() });
  await app.register(
    async (api) => {
      await api.register(instanceRoutes, {
        instances: services.instances,
        keys: services.registry,
        kinds: services.kinds,
        sinkCreation: services.sinkCreation,
        serverUrl: () => config.serverUrl,
        logger: services.logger,
      });
      await api.register(settingsRoutes, { instances: services.instances });
      await api.register(activityRoutes, { instances: services.instances, db: services.store.db });
      await api.register(clusterRoutes, { nodes: services.nodes, nodeId: config.nodeId, deadAfterMs: config.nodeDeadAfterMs });
      await api.register(proxyRoutes, { proxies: services.proxies });
      // Each event sink's own set/find routes; a set route stores settings through the instance service.
      const setSink: SinkRoutesOptions['setSink'] = (instance, kind, settings) => services.instances.setSink(instance, kind, settings);
      for (const sink of services.eventSinks) if (sink.routes) await api.register(sink.routes, { setSink });
      await api.register(sendRoutes, { outgoing: services.outgoing, mediaMaxBytes: config.mediaMaxBytes });
      await api.register(chatRoutes, { chats: services.chats });
      await api.register(profileRoutes, { profiles: services.profiles });
      await api.register(historyRoutes, { reads: services.historyReads, marks: services.chatMarks });
      await api.register(messageActionRoutes, { changes: services.messageChanges, blocks: services.blocks, media: services.mediaDownloads });
      await api.register(groupRoutes, { groups: services.groups });
      await api.register(labelRoutes, { labels: services.labels });
      await api.register(templateRoutes, { templates: services.templates });
      // Each connector kind's own routes (the sandbox's scan and inject, Meta's webhook).
      for (const kind of services.kinds.all()) if (kind.routes) await api.register(kind.routes);
    },
    { prefix: '/messenger' },
  );
  return base;
}
