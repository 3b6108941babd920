// The connector kinds the service registers, one line each; the first is the integration of a create naming none.
import type { ConnectorKind } from '../core/connector-kind.js';
import { cloudApiKind } from './cloud-api/kind.js';
import { evolutionKind } from './evolution/kind.js';
import type { KindDeps } from './kind-deps.js';
import { sandboxKind } from './sandbox/kind.js';
import { whatsAppWebKind } from './whatsapp-web/kind.js';

/** Builds one kind from what the service hands it. */
export type KindEntry = (deps: KindDeps) => ConnectorKind;

export const connectorKinds: readonly KindEntry[] = [whatsAppWebKind, cloudApiKind, evolutionKind, sandboxKind];
