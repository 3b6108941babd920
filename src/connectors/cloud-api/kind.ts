// The WHATSAPP-BUSINESS connector kind (Meta WhatsApp Cloud API): always on, messaging only, Meta's webhook routes.
import type { ConnectorKind } from '../../core/connector-kind.js';
import { invalidInput } from '../../core/errors.js';
import type { KindDeps } from '../kind-deps.js';
import { cloudApiConnectorFactory } from './connector.js';
import { deriveVerifyToken, type CloudApiSettings } from './settings.js';
import { cloudApiWebhookRoutes } from './webhook.routes.js';

const name = 'WHATSAPP-BUSINESS';

export function cloudApiKind(deps: KindDeps): ConnectorKind {
  const { config, logger } = deps;
  const settings: CloudApiSettings = { ...config.waBusiness, verifyToken: config.waBusiness.verifyToken ?? deriveVerifyToken(deps.secretsKey) };
  const webhookUrl = () => `${config.serverUrl}/messenger/webhook/meta`;
  return {
    name,
    label: 'WhatsApp Business API',
    // Meta has real interactive lists; no polls, no statuses, no presence, no privacy settings.
    capabilities: {
      messaging: { operations: ['text', 'media', 'list', 'sticker', 'location', 'contact', 'reaction', 'buttons', 'voiceNote'], lists: 'interactive' },
      presence: false,
      privacy: false,
      // Received media by Meta's media id; deleting, editing and blocking are not in the Cloud API.
      mediaDownload: true,
      templates: true,
    },
    alwaysOn: true,
    quickToOpen: true,
    creationFields: (input) => {
      if (!input.token) throw invalidInput(`token is required for ${name} (the Meta access token)`);
      if (!input.number) throw invalidInput(`number is required for ${name} (the phone-number id)`);
      if (!/^\d+$/.test(input.number)) throw invalidInput(`number must be the phone-number id Meta shows for the number (digits only) for ${name}`);
      if (input.businessId !== undefined && !/^\d+$/.test(input.businessId)) {
        throw invalidInput(`businessId must be the WhatsApp Business Account id Meta shows (digits only) for ${name}`);
      }
      return { number: input.number, providerToken: input.token, tokenIsApiKey: false };
    },
    creationAnswer: () => ({ webhook_wa_business: webhookUrl(), access_token_wa_business: settings.verifyToken }),
    listingAnswer: () => ({ webhook_wa_business: webhookUrl() }),
    create: cloudApiConnectorFactory({ settings, logger, denyPrivate: config.outboundDenyPrivate }),
    routes: async (app) => {
      await app.register(cloudApiWebhookRoutes, { settings, host: deps.host, instances: () => deps.instances.all(), logger });
    },
  };
}
