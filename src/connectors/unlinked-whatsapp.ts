// WhatsApp kinds before their connector exists: the instance is kept, stays `close`, and its sends wait in the queue.
import type { Connector, ConnectorFactory } from './connector.js';

export const unlinkedWhatsAppConnector: ConnectorFactory = (instance, host) => {
  const connector: Connector = {
    // Nothing can link yet: start leaves the instance closed, so queued sends wait (and expire after SEND_EXPIRE_AFTER_MS).
    async start() {},
    async stop() {},
    async logout() {
      await host.loggedOut(instance.id);
    },
    state: () => 'close',
    qr: () => null,
    async send() {
      throw new Error(`${instance.integration} instances cannot send until they are linked`);
    },
    async sendPresence() {
      throw new Error(`${instance.integration} instance is not linked`);
    },
    async updatePrivacy() {
      throw new Error(`${instance.integration} instance is not linked`);
    },
    async markRead() {},
  };
  return connector;
};
