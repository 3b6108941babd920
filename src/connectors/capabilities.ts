// Which operations each integration kind offers; the rest answer 400 "Method not available on …".
import { invalidInput } from '../core/errors.js';
import type { Integration } from '../core/instance.js';

export type Operation = 'text' | 'media' | 'list' | 'poll' | 'sticker' | 'status' | 'presence' | 'privacy';

const unavailable: Record<Integration, Operation[]> = {
  'WHATSAPP-BAILEYS': [],
  SANDBOX: [],
  'WHATSAPP-BUSINESS': ['poll', 'status', 'presence', 'privacy'],
  EVOLUTION: ['list', 'poll', 'sticker', 'status', 'presence', 'privacy'],
};

const channelNames: Record<Integration, string> = {
  'WHATSAPP-BAILEYS': 'WhatsApp Baileys',
  SANDBOX: 'Sandbox',
  'WHATSAPP-BUSINESS': 'WhatsApp Business API',
  EVOLUTION: 'Evolution Channel',
};

export function assertSupported(integration: Integration, operation: Operation): void {
  if (unavailable[integration].includes(operation)) {
    throw invalidInput(`Method not available on ${channelNames[integration]} (integration ${integration} cannot do ${operation})`);
  }
}
