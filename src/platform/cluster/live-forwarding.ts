// Routes marked `live` (they need the instance's live connection) are carried to the node that owns the instance and
// answered with the owner's answer; the owner serves them locally. Runs after authentication, which each node does.
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Agent, request as undiciRequest } from 'undici';
import type { Instance } from '../../core/instance.js';
import { envelope } from '../http/error-envelope.js';
import type { Logger } from '../logger.js';
import type { LiveOwner, OwnerAnswer } from './owner-directory.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route needs the live connection of the instance in its path: it is served by the node owning the instance. */
    live?: boolean;
  }
}

/** Carried by a forwarded request, naming the incarnation that forwarded it: its receiver never forwards it again. */
const forwardedByHeader = 'x-switchboard-forwarded-by';

export interface LiveForwardingOptions {
  directory: { ownerOf(instanceId: string): Promise<OwnerAnswer> };
  /** This node's incarnation. */
  self: string;
  /** How long a request waits for a new owner while its instance is moving (its owner died or hands it over). */
  moveWaitMs: number;
  /** How often the directory is read again meanwhile. */
  pollMs: number;
  /** The Retry-After of a 503 answered while the instance is moving. */
  retryAfterSeconds: number;
  /** How long the owner may take to connect. */
  connectTimeoutMs: number;
  /** How long the owner may take to answer (the longest a local request may take: media fetch, conversion, connecting). */
  answerTimeoutMs: number;
  logger: Logger;
}

/** Request headers that belong to one hop, or that the forwarding node sets itself. */
const hopRequestHeaders = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'http2-settings',
  'accept-encoding',
  'x-request-id',
  forwardedByHeader,
]);

/** Answer headers not copied: one hop's, the length (recomputed), and those this node sets itself (CORS, rate limit, id). */
function keptAnswerHeader(name: string): boolean {
  return !(
    name === 'connection' ||
    name === 'keep-alive' ||
    name === 'transfer-encoding' ||
    name === 'content-length' ||
    name === 'date' ||
    name === 'vary' ||
    name === 'x-request-id' ||
    name.startsWith('access-control-') ||
    name.startsWith('x-ratelimit-')
  );
}

/** Registers the hook (after authentication); answers what to call when the app closes. */
export function registerLiveForwarding(app: FastifyInstance, options: LiveForwardingOptions): { close(): Promise<void> } {
  const agent = new Agent({
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: options.answerTimeoutMs,
    bodyTimeout: options.answerTimeoutMs,
  });
  const log = options.logger.child({ component: 'live-forwarding' });

  // Most routes need no live connection: they pass at once, without a promise per request (it showed in profiles).
  app.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config?.live !== true || !request.instance) return done();
    // Answered here (a 503) or by the owner: the hook ends without calling done, as Fastify's callback hooks answer.
    toOwner(request, reply).then((answered) => {
      if (answered === undefined) done();
    }, done);
  });

  /**
   * A live route: undefined when this node answers it (it holds the instance, or nobody does), else the reply, sent
   * with the owner's answer or a 503.
   */
  async function toOwner(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const instance = request.instance;
    if (!instance) return;
    const forwardedBy = request.headers[forwardedByHeader];
    let owner = await options.directory.ownerOf(instance.id);
    if (owner === 'unassigned' || (owner !== 'moving' && owner.self)) return;
    if (forwardedBy !== undefined) {
      // Forwarded here by a node that took this one for the owner: the ownership changed meanwhile. Never forwarded twice.
      return refuse(reply, options.retryAfterSeconds, `the instance "${instance.name}" is moving between nodes; retry in ${options.retryAfterSeconds} seconds`);
    }
    if (owner === 'moving') owner = await waitForOwner(options, instance.id);
    if (owner === 'unassigned' || (owner !== 'moving' && owner.self)) return;
    if (owner === 'moving') {
      log.info({ instance: instance.name }, 'no live node holds the instance yet: answered 503');
      return refuse(
        reply,
        options.retryAfterSeconds,
        `the instance "${instance.name}" is being taken over by another node; retry in ${options.retryAfterSeconds} seconds`,
      );
    }
    return forward(request, reply, instance, owner);
  }

  async function forward(request: FastifyRequest, reply: FastifyReply, instance: Instance, owner: LiveOwner) {
    const unreachable = () =>
      `the node holding the instance "${instance.name}" cannot be reached; another node takes the instance over once that node is known dead: retry in ${options.retryAfterSeconds} seconds`;
    if (!owner.address) {
      log.warn({ instance: instance.name, owner: owner.incarnation }, 'the owner node has no address (NODE_ADDRESS): answered 503');
      return refuse(reply, options.retryAfterSeconds, unreachable());
    }
    const headers = forwardedHeaders(request.headers);
    headers[forwardedByHeader] = options.self;
    headers['x-request-id'] = request.id;
    const withBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
    try {
      const answer = await undiciRequest(`${owner.address}${request.url}`, {
        dispatcher: agent,
        method: request.method as 'GET',
        headers,
        body: withBody ? request.raw : null,
      });
      const body = Buffer.from(await answer.body.arrayBuffer());
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && keptAnswerHeader(name)) reply.header(name, value);
      }
      log.debug({ instance: instance.name, owner: owner.incarnation, status: answer.statusCode }, 'request answered by the owner node');
      return reply.code(answer.statusCode).send(body);
    } catch (error) {
      log.warn({ err: error, instance: instance.name, owner: owner.incarnation, address: owner.address }, 'the owner node did not answer: answered 503');
      return refuse(reply, options.retryAfterSeconds, unreachable());
    }
  }

  return { close: () => agent.close() };
}

/** Reads the directory again until a live node holds the instance, or the wait is over (answers `moving` then). */
async function waitForOwner(options: LiveForwardingOptions, instanceId: string): Promise<OwnerAnswer> {
  const until = Date.now() + options.moveWaitMs;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(options.pollMs, Math.max(0, until - Date.now()))));
    const owner = await options.directory.ownerOf(instanceId);
    if (owner !== 'moving') return owner;
  }
  return 'moving';
}

function forwardedHeaders(given: IncomingHttpHeaders): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(given)) {
    if (value !== undefined && !hopRequestHeaders.has(name)) headers[name] = value;
  }
  return headers;
}

function refuse(reply: FastifyReply, retryAfterSeconds: number, message: string) {
  return reply
    .code(503)
    .header('retry-after', retryAfterSeconds)
    .send(envelope(503, [message]));
}
