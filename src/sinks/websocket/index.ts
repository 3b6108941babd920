// The socket.io websocket on the HTTP server's port: authenticated namespaces per instance and the global stream.
import type { FastifyInstance } from 'fastify';
import { Server, type DefaultEventsMap, type Socket } from 'socket.io';
import type { Logger } from '../../platform/logger.js';
import type { Config } from '../../platform/config.js';
import type { InstanceRegistry } from '../../instances/registry.js';
import { admitGlobal, admitInstance, isRefusal, type AccessDeps, type Refusal } from './access.js';
import { websocketFanOut } from './fan-out.js';
import { handshakeKey } from './handshake-key.js';
import { corsOption, originAllowed } from '../../platform/http/origin.js';
import { Subscribers } from './subscribers.js';
import type { WebsocketSink } from './sink.js';

export type { WebsocketPayload } from './fan-out.js';

export interface WebsocketOptions {
  /** WEBSOCKET_ENABLED: without it nothing is attached and `/socket.io/` stays a 404. */
  enabled: boolean;
  /** WEBSOCKET_GLOBAL_EVENTS: every event of every instance also goes to `/`, for global-key clients. */
  globalEvents: boolean;
}

/** What the socket.io server works with: the service's key, instances and the websocket sink. */
export interface WebsocketDeps {
  config: Pick<Config, 'corsOrigin'>;
  logger: Logger;
  globalApiKey: string;
  registry: Pick<InstanceRegistry, 'byApiKey' | 'byInstanceName' | 'byInstanceId'>;
  /** The sink whose committed events (read from the outbox, whichever node wrote them) the server fans out. */
  websocket: Pick<WebsocketSink, 'follow'>;
}

export interface WebsocketHandle {
  /** Disconnects every client and stops emitting; the HTTP server itself is left to its owner. */
  close(): Promise<void>;
}

/** Instance namespaces: `/` + an instance name (1–64 of letters, digits, `-`, `_`, `.`, starting with a letter or digit). */
const instanceNamespace = /^\/[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Clients only listen: nothing they send is acted upon, so inbound frames stay small. */
const maxInboundBytes = 16 * 1024;

/** What the handshake middleware learnt about an admitted socket of an instance namespace. */
interface SocketData {
  instanceId?: string;
  keyKind?: 'global' | 'instance';
}

type WireServer = Server<DefaultEventsMap, DefaultEventsMap, DefaultEventsMap, SocketData>;
type WireSocket = Socket<DefaultEventsMap, DefaultEventsMap, DefaultEventsMap, SocketData>;

class HandshakeRefused extends Error {
  readonly data: { status: number };
  constructor(refusal: Refusal) {
    super(refusal.message);
    this.data = { status: refusal.status };
  }
}

export function attachWebsocket(app: Pick<FastifyInstance, 'server'>, services: WebsocketDeps, options: WebsocketOptions): WebsocketHandle {
  if (!options.enabled) return { close: async () => {} };
  const { config, registry } = services;
  const logger = services.logger.child({ component: 'websocket' });
  let closed = false;

  const io: WireServer = new Server(app.server, {
    serveClient: false,
    // A namespace created for a handshake that is then refused is removed again: no growth from probing names.
    cleanupEmptyChildNamespaces: true,
    connectTimeout: 10_000,
    maxHttpBufferSize: maxInboundBytes,
    cors: corsOption(config.corsOrigin),
    allowRequest: (req, answer) => answer(closed ? 'closed' : null, !closed && originAllowed(req.headers.origin, config.corsOrigin)),
  });

  const access: AccessDeps = {
    globalApiKey: services.globalApiKey,
    globalEvents: options.globalEvents,
    byApiKey: (key) => registry.byApiKey(key),
    byInstanceName: (name) => registry.byInstanceName(name),
  };
  const subscribers = new Subscribers();

  const refused = (socket: WireSocket, refusal: Refusal, namespace: string): HandshakeRefused => {
    logger.info({ namespace, status: refusal.status, reason: refusal.message, address: socket.handshake.address }, 'websocket handshake refused');
    return new HandshakeRefused(refusal);
  };

  io.use((socket, next) => {
    const refusal = admitGlobal(handshakeKey(socket.handshake), access);
    next(refusal ? refused(socket, refusal, '/') : undefined);
  });
  io.on('connection', (socket) => {
    logger.info({ namespace: '/', socket: socket.id }, 'websocket client joined the global stream');
    ignoreInbound(socket, logger);
    socket.once('disconnect', (reason) => logger.info({ namespace: '/', socket: socket.id, reason }, 'websocket client left'));
  });

  const instances = io.of(instanceNamespace);
  instances.use((socket, next) => {
    const name = socket.nsp.name.slice(1);
    const grant = admitInstance(name, handshakeKey(socket.handshake), access);
    if (isRefusal(grant)) return next(refused(socket, grant, socket.nsp.name));
    socket.data = { instanceId: grant.instance.id, keyKind: grant.keyKind };
    next();
  });
  instances.on('connection', (socket) => {
    const instance = socket.data.instanceId ? registry.byInstanceId(socket.data.instanceId) : undefined;
    // Deleted between the handshake check and now.
    if (!instance) return void socket.disconnect();
    const log = logger.child({ instance: instance.name });
    subscribers.add(instance.id, socket);
    ignoreInbound(socket, log);
    log.info({ socket: socket.id, key: socket.data.keyKind }, 'websocket client joined the instance namespace');
    socket.once('disconnect', (reason) => log.info({ socket: socket.id, reason }, 'websocket client left'));
  });

  const unfollow = services.websocket.follow(
    websocketFanOut({
      io,
      subscribers,
      instanceExists: (id) => registry.byInstanceId(id) !== undefined,
      globalEvents: options.globalEvents,
      logger,
      isClosed: () => closed,
    }),
  );
  logger.info({ globalEvents: options.globalEvents }, 'websocket ready');

  return {
    async close() {
      if (closed) return;
      closed = true;
      unfollow();
      subscribers.dropAll();
      io.of('/').disconnectSockets();
      // Not io.close(): that would also close the HTTP server, which belongs to Fastify.
      io.engine.close();
    },
  };
}

/** Every client-to-server event is ignored (upstream's `sendNode` wrote raw stanzas to any instance's connection). */
function ignoreInbound(socket: WireSocket, log: Logger): void {
  socket.onAny((event: unknown) => {
    log.debug({ socket: socket.id, event: typeof event === 'string' ? event.slice(0, 64) : typeof event }, 'ignored an event sent by a websocket client');
  });
}
