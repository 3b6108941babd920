// Pressing a reply button of a received buttons message: the answer WhatsApp sends back (an interactive response).
import { invalidInput } from '../../core/errors.js';

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** The reply buttons (`quick_reply`) of a stored buttons message: their ids and texts, in order. */
function replyButtonsOf(content: Record<string, unknown>): { id: string; text: string }[] {
  const interactive = record(record(record(content.viewOnceMessage).message).interactiveMessage);
  const buttons = record(interactive.nativeFlowMessage).buttons;
  if (!Array.isArray(buttons)) return [];
  return buttons.flatMap((button) => {
    const { name, buttonParamsJson } = record(button);
    if (name !== 'quick_reply' || typeof buttonParamsJson !== 'string') return [];
    try {
      const params = record(JSON.parse(buttonParamsJson));
      return typeof params.id === 'string' ? [{ id: params.id, text: typeof params.display_text === 'string' ? params.display_text : '' }] : [];
    } catch {
      return [];
    }
  });
}

/**
 * The `interactiveResponseMessage` answering the button `buttonId` of the message `quoted` (key id `keyId`, written by
 * `author`): the button's text as body, its id in the native-flow response, the message quoted. A 400 when the message
 * has no such reply button.
 */
export function buttonResponse(quoted: { keyId: string; author: string; content: Record<string, unknown> }, buttonId: string) {
  const buttons = replyButtonsOf(quoted.content);
  if (buttons.length === 0) throw invalidInput(`message ${quoted.keyId} has no reply buttons to press`);
  const button = buttons.find((candidate) => candidate.id === buttonId);
  if (!button) throw invalidInput(`buttonId must be the id of one of the message's reply buttons: ${buttons.map((b) => b.id).join(', ')}`);
  return {
    messageType: 'interactiveResponseMessage',
    content: {
      interactiveResponseMessage: {
        body: { text: button.text, format: 'DEFAULT' },
        nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: JSON.stringify({ id: button.id }), version: 3 },
        contextInfo: { stanzaId: quoted.keyId, participant: quoted.author, quotedMessage: quoted.content },
      },
    },
  };
}
