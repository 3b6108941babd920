// The EVOLUTION connector kind: always open, texts and media recorded and announced, nothing else.
import type { ConnectorKind } from '../../core/connector-kind.js';
import { plainCreationFields } from '../plain-creation.js';
import { evolutionConnector } from './index.js';

export function evolutionKind(): ConnectorKind {
  return {
    name: 'EVOLUTION',
    label: 'Evolution Channel',
    capabilities: { messaging: { operations: ['text', 'media'], lists: 'poll' }, presence: false, privacy: false },
    alwaysOn: true,
    quickToOpen: true,
    // `number` is the routing id of the bring-your-own transport.
    creationFields: plainCreationFields,
    create: evolutionConnector,
  };
}
