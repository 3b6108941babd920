// The EVOLUTION integration as upstream has it: always open, sends recorded and announced, nothing delivered.
import type { ConnectorFactory } from '../../core/connector.js';
import { alwaysOpenConnector } from '../always-open.js';

export const evolutionConnector: ConnectorFactory = (instance, host) =>
  alwaysOpenConnector(instance, host, {
    // Bring-your-own transport: the send is recorded and SEND_MESSAGE emitted by the worker; there is no wire to use.
    // No presence and no privacy modules: the API answers "Method not available" for them.
    messaging: {
      async send() {},
      async markRead() {},
    },
  });
