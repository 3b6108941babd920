// The EVOLUTION integration as upstream has it: always open, sends recorded and announced, nothing delivered.
import type { Connector, ConnectorFactory } from '../../core/connector.js';

export const evolutionConnector: ConnectorFactory = (instance, host) => {
  let state: 'open' | 'close' = 'close';
  const connector: Connector = {
    async start() {
      state = 'open';
      await host.connectionChanged(instance.id, { state: 'open' });
    },
    async stop() {
      state = 'close';
    },
    async logout() {
      state = 'close';
      await host.loggedOut(instance.id);
    },
    state: () => state,
    qr: () => null,
    // Bring-your-own transport: the send is recorded and SEND_MESSAGE emitted by the worker; there is no wire to use.
    // No presence and no privacy modules: the API answers "Method not available" for them.
    messaging: {
      async send() {},
      async markRead() {},
    },
  };
  return connector;
};
