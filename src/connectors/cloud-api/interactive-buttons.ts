// A stored buttons message (view-once interactive, native flow) as a Cloud API interactive message with reply buttons.
import { ProviderError } from '../../core/connector.js';

/** Meta's limits for interactive reply-button messages (characters, count). */
const buttonLimits = { body: 1024, footer: 60, buttons: 3, title: 20, id: 256 } as const;

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

function paramsOf(button: Record<string, unknown>): Record<string, unknown> {
  try {
    return record(JSON.parse(str(button.buttonParamsJson)));
  } catch {
    return {};
  }
}

/**
 * `{viewOnceMessage: {message: {interactiveMessage}}}` to `{type: "button", body, footer?, action: {buttons: [{type:
 * "reply", reply: {id, title}}]}}`. As upstream, every button becomes a reply button (a copy, url or call button's id
 * is its code, link or number) and repeated texts or ids are refused; unlike upstream, the description and footer go
 * out too, and what Meta would refuse (a PIX card, more than 3 buttons, long texts) is a 400 before anything is stored.
 */
export function interactiveButtons(viewOnce: Record<string, unknown>): Record<string, unknown> {
  const interactive = record(record(viewOnce.message).interactiveMessage);
  const flow = record(interactive.nativeFlowMessage);
  const buttons = Array.isArray(flow.buttons) ? flow.buttons.map(record) : [];
  const problems: string[] = [];
  if (buttons.some((button) => button.name === 'payment_info')) {
    throw new ProviderError('refused', ['Method not available on WhatsApp Business API (integration WHATSAPP-BUSINESS cannot send PIX buttons)']);
  }
  if (buttons.length === 0) problems.push('At least one button is required');
  if (buttons.length > buttonLimits.buttons) {
    problems.push(`buttons must have at most ${buttonLimits.buttons} buttons on WHATSAPP-BUSINESS (Meta's limit; it has ${buttons.length})`);
  }
  const replies = buttons.map((button, i) => {
    const params = paramsOf(button);
    const title = str(params.display_text).trim();
    const id = str(params.id) || str(params.copy_code) || str(params.url) || str(params.phone_number);
    if (title.length > buttonLimits.title) {
      problems.push(`buttons[${i}].displayText must be at most ${buttonLimits.title} characters on WHATSAPP-BUSINESS (Meta's limit; it has ${title.length})`);
    }
    if (id.length > buttonLimits.id) problems.push(`buttons[${i}] id must be at most ${buttonLimits.id} characters on WHATSAPP-BUSINESS (Meta's limit)`);
    return { type: 'reply', reply: { id, title } };
  });
  const titles = replies.map((reply) => reply.reply.title);
  const ids = replies.map((reply) => reply.reply.id);
  if (new Set(titles).size !== titles.length) problems.push('Button texts cannot be repeated');
  if (new Set(ids).size !== ids.length) problems.push('Button IDs cannot be repeated.');
  const body = str(record(interactive.body).text).trim();
  const footer = str(record(interactive.footer).text).trim();
  if (body.length > buttonLimits.body)
    problems.push(`title and description must be at most ${buttonLimits.body} characters together on WHATSAPP-BUSINESS (Meta's limit)`);
  if (footer.length > buttonLimits.footer) problems.push(`footer must be at most ${buttonLimits.footer} characters on WHATSAPP-BUSINESS (Meta's limit)`);
  if (problems.length > 0) throw new ProviderError('refused', problems);
  return {
    type: 'button',
    body: { text: body || 'Select' },
    ...(footer ? { footer: { text: footer } } : {}),
    action: { buttons: replies },
  };
}
