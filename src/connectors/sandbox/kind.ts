// The SANDBOX connector kind: a messenger simulated inside the service (QR scan, injection, its own media store).
import { whatsAppWebCapabilities, type ConnectorKind } from '../../core/connector-kind.js';
import type { KindDeps } from '../kind-deps.js';
import { plainCreationFields } from '../plain-creation.js';
import { sandboxLid } from './addresses.js';
import { removeCodesOf } from './codes.js';
import { removeBlocksOf } from './blocks.js';
import { removeSandboxLabelsOf } from './labels.js';
import { SandboxNetwork } from './network.js';
import { removeMailOf } from './mailbox.js';
import { sandboxRoutes } from './routes.js';

const name = 'SANDBOX';

export function sandboxKind(deps: KindDeps): ConnectorKind {
  const { config, instances } = deps;
  const network = new SandboxNetwork({
    db: deps.db,
    config,
    host: deps.host,
    logger: deps.logger,
    fleet: deps.fleet,
    lookup: {
      byId: (id) => instances.byId(id),
      byOwnerJid: (jid) => {
        const instance = instances.byOwnerJid(jid);
        return instance && instance.status === 'open' && instance.integration === name ? instance : undefined;
      },
      byLid: (lid) =>
        instances
          .all()
          .find(
            (instance) => instance.integration === name && instance.status === 'open' && instance.ownerJid !== null && sandboxLid(instance.ownerJid) === lid,
          ),
    },
  });
  deps.onRemove(removeCodesOf);
  deps.onRemove(removeBlocksOf);
  deps.onRemove(removeSandboxLabelsOf);
  deps.onRemove(removeMailOf);
  return {
    name,
    label: 'Sandbox',
    capabilities: whatsAppWebCapabilities,
    alwaysOn: false,
    quickToOpen: true,
    creationFields: plainCreationFields,
    // SANDBOX_AUTO_LINK: linked at creation, to `number` or a generated one, for demos and tests.
    ...(config.sandboxAutoLink
      ? {
          linkAtCreation: {
            check: (input) => {
              if (input.number !== undefined) network.checkAutoLinkNumber(input.number);
            },
            link: async (instance, input) => {
              await network.autoLink(instance, input.number);
            },
          },
        }
      : {}),
    create: (instance) => network.createConnector(instance),
    routes: async (app) => {
      await app.register(sandboxRoutes, { network, integration: name, instanceName: (id) => instances.byId(id)?.name });
    },
  };
}
