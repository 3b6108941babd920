// The life of a connector with no link to keep: open from start until stop or logout, never a QR code to scan.
import type { Connector, ConnectorHost } from '../core/connector.js';
import type { Instance } from '../core/instance.js';

/** A connector open while started; `modules` are what it can do (messaging, and presence or privacy when it has them). */
export function alwaysOpenConnector(instance: Instance, host: ConnectorHost, modules: Pick<Connector, 'messaging' | 'presence' | 'privacy'>): Connector {
  let state: 'open' | 'close' = 'close';
  return {
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
    ...modules,
  };
}
