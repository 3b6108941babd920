// GET/POST /webhook/meta: Meta's verification handshake, and signed deliveries of messages and receipts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ConnectorHost } from '../../core/connector.js';
import type { Instance } from '../../core/instance.js';
import type { Logger } from '../../platform/logger.js';
import { CodedError, forbidden, invalidInput, unavailable } from '../../core/errors.js';
import { secretsEqual } from '../../platform/util/api-keys.js';
import { rawAnswer, sentAsBuilt } from '../../platform/http/schemas.js';
import type { CloudApiSettings } from './settings.js';
import { checkSignature } from './signature.js';
import { deliverWebhook, instancesByPhoneNumberId } from './webhook-delivery.js';

/** Meta's payloads stay far below this; the limit only bounds what an unsigned stranger can make us read. */
const bodyLimit = 4 * 1024 * 1024;

const VerifyQuery = Type.Object({
  'hub.mode': Type.Optional(Type.String()),
  'hub.verify_token': Type.Optional(Type.String()),
  'hub.challenge': Type.Optional(Type.String()),
});

export interface CloudApiWebhookOptions {
  settings: CloudApiSettings;
  /** Where deliveries are reported (the core's connector host). */
  host: ConnectorHost;
  /** Every instance, for finding those of a phone-number id. */
  instances: () => Instance[];
  logger: Logger;
}

export const cloudApiWebhookRoutes: FastifyPluginAsyncTypebox<CloudApiWebhookOptions> = async (app, { settings, host, instances, logger }) => {
  const log = logger.child({ integration: 'WHATSAPP-BUSINESS' });
  const instancesFor = instancesByPhoneNumberId(instances);

  // The signature covers the exact bytes Meta sent: this plugin reads every body raw and parses JSON itself.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));

  app.get(
    '/webhook/meta',
    {
      config: { access: 'public' },
      ...sentAsBuilt,
      schema: {
        tags: ['integrations'],
        summary: 'Meta webhook verification (WHATSAPP-BUSINESS): answers hub.challenge when hub.verify_token matches',
        security: [],
        querystring: VerifyQuery,
        response: { 200: rawAnswer('text/plain', 'The hub.challenge, as Meta expects it') },
      },
    },
    async (request, reply) => {
      const query = request.query;
      if (query['hub.mode'] !== 'subscribe') throw invalidInput('hub.mode must be "subscribe"');
      const challenge = query['hub.challenge'];
      if (!challenge) throw invalidInput('hub.challenge is required');
      if (!secretsEqual(query['hub.verify_token'] ?? '', settings.verifyToken)) {
        log.warn('Meta webhook verification refused: hub.verify_token does not match');
        throw forbidden('hub.verify_token does not match the verify token of this service (access_token_wa_business, WA_BUSINESS_TOKEN_WEBHOOK)');
      }
      log.info('Meta webhook verified');
      return reply.status(200).type('text/plain; charset=utf-8').send(challenge);
    },
  );

  app.post(
    '/webhook/meta',
    {
      config: { access: 'public' },
      ...sentAsBuilt,
      bodyLimit,
      schema: {
        tags: ['integrations'],
        summary: 'Meta webhook deliveries (WHATSAPP-BUSINESS), signed with X-Hub-Signature-256 under the app secret',
        security: [],
        response: {
          200: Type.Object(
            { status: Type.Literal('received'), messages: Type.Integer(), statuses: Type.Integer() },
            { description: 'How many messages and statuses the delivery carried for known instances' },
          ),
        },
      },
    },
    async (request, reply) => {
      if (settings.appSecrets.length === 0) {
        log.error('a Meta webhook arrived but WA_BUSINESS_APP_SECRET is not set: refused, since its signature cannot be checked');
        throw unavailable('WA_BUSINESS_APP_SECRET is not configured: Meta webhooks cannot be verified and are refused');
      }
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const header = request.headers['x-hub-signature-256'];
      const verdict = checkSignature(raw, Array.isArray(header) ? header[0] : header, settings.appSecrets);
      if (verdict !== 'valid') {
        log.warn({ verdict }, 'Meta webhook refused: bad signature');
        throw new CodedError(
          'unauthenticated',
          verdict === 'missing'
            ? 'X-Hub-Signature-256 header is required'
            : verdict === 'malformed'
              ? 'X-Hub-Signature-256 must look like sha256=<64 hex digits>'
              : 'X-Hub-Signature-256 does not match the body under the configured app secret (WA_BUSINESS_APP_SECRET)',
        );
      }
      let payload: unknown;
      try {
        payload = JSON.parse(raw.toString('utf8'));
      } catch {
        throw invalidInput('body is not valid JSON');
      }
      const outcome = await deliverWebhook(payload, { host, instancesFor, logger });
      if (outcome.unmatched.length > 0) {
        log.info({ phoneNumberIds: outcome.unmatched }, 'Meta webhook for phone-number ids no instance has; ignored');
      }
      return reply.status(200).send({ status: 'received', messages: outcome.messages, statuses: outcome.statuses });
    },
  );
};
