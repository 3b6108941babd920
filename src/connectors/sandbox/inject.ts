// Validation of a simulated incoming message (from any outside number) into its WhatsApp shape.
import { invalidInput } from '../../core/errors.js';
import { parseUserAddress } from './addresses.js';

export interface InjectInput {
  /** A phone number or a user address. */
  from: string;
  text?: string;
  /** Raw WhatsApp message content, e.g. `{conversation: 'hi'}` or `{imageMessage: {...}}`. */
  message?: object;
  pushName?: string;
}

export interface InjectedContent {
  remoteJid: string;
  pushName: string | null;
  messageType: string;
  content: Record<string, unknown>;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks the input (which may come straight from a request body) and shapes it; throws a 400 listing the problems. */
export function shapeInjected(input: InjectInput): InjectedContent {
  const problems: string[] = [];
  const from = input.from as unknown;
  let remoteJid: string | null = null;
  if (typeof from !== 'string' || from.trim() === '') {
    problems.push('from is required');
  } else {
    remoteJid = parseUserAddress(from.trim());
    if (remoteJid === null) {
      problems.push('from must be a phone number of 5 to 15 digits or a user address such as 5511999999999@s.whatsapp.net');
    }
  }
  const pushName = input.pushName as unknown;
  if (pushName !== undefined && pushName !== null && typeof pushName !== 'string') problems.push('pushName must be a string');

  const hasText = input.text !== undefined && input.text !== null;
  const hasMessage = input.message !== undefined && input.message !== null;
  let content: Record<string, unknown> | null = null;
  let messageType = '';
  if (hasText === hasMessage) {
    problems.push('give exactly one of text or message');
  } else if (hasText) {
    const text = input.text as unknown;
    if (typeof text !== 'string' || text === '') problems.push('text must be a non-empty string');
    else {
      content = { conversation: text };
      messageType = 'conversation';
    }
  } else {
    const message = input.message as unknown;
    const type = isPlainObject(message) ? Object.keys(message).find((key) => key !== 'messageContextInfo') : undefined;
    if (!isPlainObject(message) || type === undefined) {
      problems.push('message must be an object holding the message content, e.g. {"conversation": "hi"}');
    } else {
      content = structuredClone(message);
      messageType = type;
    }
  }
  if (problems.length > 0 || remoteJid === null || content === null) throw invalidInput(...problems);
  return { remoteJid, pushName: typeof pushName === 'string' ? pushName : null, messageType, content };
}
