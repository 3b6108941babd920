// The WHATSAPP-BAILEYS connector kind: WhatsApp Web linked by QR code or pairing code, with every capability module.
import { whatsAppWebCapabilities, type ConnectorKind } from '../../core/connector-kind.js';
import type { KindDeps } from '../kind-deps.js';
import { createWhatsAppWebFactory } from './index.js';
import { pairingDigits, requiredPairingDigits } from './pairing-number.js';

export function whatsAppWebKind(deps: KindDeps): ConnectorKind {
  return {
    name: 'WHATSAPP-BAILEYS',
    label: 'WhatsApp Baileys',
    capabilities: whatsAppWebCapabilities,
    alwaysOn: false,
    // The number is for a pairing code: the same rule as connect's, checked before anything is stored.
    creationFields: (input) => ({
      number: input.number !== undefined ? (pairingDigits(input.number) ?? null) : null,
      providerToken: null,
      tokenIsApiKey: true,
    }),
    pairingNumber: requiredPairingDigits,
    create: createWhatsAppWebFactory({ config: deps.config, logger: deps.logger }),
  };
}
