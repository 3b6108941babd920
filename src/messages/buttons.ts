// Builds the content of sendButtons: a view-once interactive message with native-flow buttons (reply, copy, url, call, pix).
import { randomBytes, randomUUID } from 'node:crypto';
import { invalidInput } from '../core/errors.js';

type ButtonType = 'reply' | 'copy' | 'url' | 'call' | 'pix';

interface ButtonInput {
  type: ButtonType;
  displayText?: string;
  id?: string;
  copyCode?: string;
  url?: string;
  phoneNumber?: string;
  currency?: string;
  name?: string;
  keyType?: 'phone' | 'email' | 'cpf' | 'cnpj' | 'random';
  key?: string;
}

export interface ButtonsInput {
  title?: string;
  description?: string;
  footer?: string;
  buttons: ButtonInput[];
}

/** The fields each button type needs (besides `type`). */
const requiredFields: Record<ButtonType, (keyof ButtonInput)[]> = {
  reply: ['displayText', 'id'],
  copy: ['displayText', 'copyCode'],
  url: ['displayText', 'url'],
  call: ['displayText', 'phoneNumber'],
  pix: ['currency', 'name', 'keyType', 'key'],
};

/** WhatsApp's native-flow names of the button types. */
const flowNames: Record<ButtonType, string> = {
  reply: 'quick_reply',
  copy: 'cta_copy',
  url: 'cta_url',
  call: 'cta_call',
  pix: 'payment_info',
};

const pixKeyTypes = { phone: 'PHONE', email: 'EMAIL', cpf: 'CPF', cnpj: 'CNPJ', random: 'EVP' } as const;
const maxReplyButtons = 3;
const actionTypes: ButtonType[] = ['copy', 'url', 'call'];

/** Evolution's rules on the set of buttons, with its messages, then the fields each button needs. */
export function checkButtons(input: ButtonsInput): void {
  const { buttons } = input;
  if (buttons.length === 0) throw invalidInput('At least one button is required');
  const types = new Set(buttons.map((button) => button.type));
  const hasAction = actionTypes.some((type) => types.has(type));
  if (types.has('reply')) {
    if (buttons.length > maxReplyButtons) throw invalidInput(`Maximum of ${maxReplyButtons} reply buttons allowed`);
    if (hasAction) throw invalidInput('Reply buttons cannot be mixed with other button types');
  }
  if (types.has('pix')) {
    if (buttons.length > 1) throw invalidInput('Only one PIX button is allowed');
    if (hasAction) throw invalidInput('PIX button cannot be mixed with other button types');
  }
  buttons.forEach((button, i) => {
    for (const field of requiredFields[button.type]) {
      const value = button[field];
      if (typeof value !== 'string' || value.trim() === '') throw invalidInput(`buttons[${i}].${field} is required for a ${button.type} button`);
    }
  });
  const ids = buttons.filter((button) => button.type === 'reply').map((button) => button.id);
  if (new Set(ids).size !== ids.length) throw invalidInput('buttons must not repeat a reply id (each reply button needs its own id)');
  if (!types.has('pix') && (input.title === undefined || input.title.trim() === '')) {
    throw invalidInput("title is required (the message's text above the buttons)");
  }
}

/** One button's native-flow parameters, as JSON text. */
function buttonParams(button: ButtonInput): string {
  switch (button.type) {
    case 'reply':
      return JSON.stringify({ display_text: button.displayText, id: button.id });
    case 'copy':
      return JSON.stringify({ display_text: button.displayText, copy_code: button.copyCode });
    case 'url':
      return JSON.stringify({ display_text: button.displayText, url: button.url, merchant_url: button.url });
    case 'call':
      return JSON.stringify({ display_text: button.displayText, phone_number: button.phoneNumber });
    case 'pix':
      return JSON.stringify(pixOrder(button));
  }
}

/** A zero-value order carrying a static PIX code: what WhatsApp shows as a "pay with PIX" card. */
function pixOrder(button: ButtonInput) {
  const zero = { value: 0, offset: 100 };
  return {
    currency: button.currency,
    total_amount: zero,
    reference_id: referenceId(),
    type: 'physical-goods',
    order: {
      status: 'pending',
      subtotal: zero,
      order_type: 'ORDER',
      items: [{ name: '', amount: zero, quantity: 0, sale_amount: zero }],
    },
    payment_settings: [
      {
        type: 'pix_static_code',
        pix_static_code: { merchant_name: button.name, key: button.key, key_type: pixKeyTypes[button.keyType ?? 'random'] },
      },
    ],
    share_payment_status: false,
  };
}

const referenceAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function referenceId(): string {
  return [...randomBytes(11)].map((byte) => referenceAlphabet[byte % referenceAlphabet.length]).join('');
}

/**
 * `viewOnceMessage` around an `interactiveMessage`: body `*title*` (and the description), footer, an optional image
 * header, the buttons. A PIX message is the payment card alone (no body, footer or header), as upstream. Quotes and
 * mentions go in the interactive message's contextInfo.
 */
export function buttonsContent(
  input: ButtonsInput,
  extra: { header?: Record<string, unknown>; contextInfo?: Record<string, unknown> },
): { messageType: string; content: Record<string, unknown> } {
  checkButtons(input);
  const isPix = input.buttons[0].type === 'pix';
  const nativeFlowMessage = {
    buttons: input.buttons.map((button) => ({ name: flowNames[button.type], buttonParamsJson: buttonParams(button) })),
    messageParamsJson: JSON.stringify({ from: 'api', templateId: randomUUID() }),
  };
  const interactiveMessage: Record<string, unknown> = isPix
    ? { nativeFlowMessage }
    : {
        body: { text: `*${input.title}*${input.description ? `\n\n${input.description}\n` : ''}` },
        ...(input.footer ? { footer: { text: input.footer } } : {}),
        ...(extra.header ? { header: extra.header } : {}),
        nativeFlowMessage,
      };
  if (extra.contextInfo) interactiveMessage.contextInfo = extra.contextInfo;
  return { messageType: 'viewOnceMessage', content: { viewOnceMessage: { message: { interactiveMessage } } } };
}

/** The header of a buttons message showing an image (the prepared `imageMessage` node). */
export function imageHeader(imageMessage: Record<string, unknown>): Record<string, unknown> {
  const { caption: _caption, contextInfo: _context, ...image } = imageMessage;
  return { title: '', hasMediaAttachment: true, imageMessage: image };
}
