// The WHATSAPP-BAILEYS connector kind: WhatsApp Web multi-device through baileys, one connector per instance.
import type { ConnectorFactory } from '../../core/connector.js';
import type { Logger } from '../../platform/logger.js';
import { DeferredConnector, type WebConnector } from './deferred.js';
import type { WhatsAppWebConfig } from './options.js';
import type { SocketFactory } from './socket.js';
import type { ConnectorDeps } from './connector.js';

export type { WaWebSettings } from './options.js';
export { waWebDefaults } from './options.js';
export type { WaSocket } from './socket.js';

export interface WhatsAppWebDeps {
  config: WhatsAppWebConfig;
  logger: Logger;
  /** Builds the Baileys socket; defaults to baileys' makeWASocket (tests inject a fake socket). */
  socketFactory?: SocketFactory;
  /** Test hooks: Baileys socket options, the first-QR wait of start(), the jitter source. */
  tuning?: Pick<ConnectorDeps, 'socketOverrides' | 'firstQrWaitMs' | 'random'>;
}

export function createWhatsAppWebFactory(deps: WhatsAppWebDeps): ConnectorFactory {
  return (instance, host) =>
    new DeferredConnector(async (): Promise<WebConnector> => {
      const [{ WhatsAppWebConnector }, { baileysSocketFactory }] = await Promise.all([import('./connector.js'), import('./socket.js')]);
      return new WhatsAppWebConnector(instance, host, {
        config: deps.config,
        logger: deps.logger,
        socketFactory: deps.socketFactory ?? baileysSocketFactory,
        ...deps.tuning,
      });
    });
}
