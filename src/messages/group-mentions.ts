// Mentions in group messages: everyone (mentionsEveryOne) or the people named, as the group's participants know them.
import type { GroupParticipant } from '../core/connector.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The node of the content that carries the contextInfo (`extendedTextMessage`, `imageMessage`…), a text made extended. */
function contextNode(content: Record<string, unknown>): Record<string, unknown> | undefined {
  if (typeof content.conversation === 'string' && !content.extendedTextMessage) {
    content.extendedTextMessage = { text: content.conversation };
    delete content.conversation;
  }
  const wrapped = content.viewOnceMessage;
  if (isRecord(wrapped) && isRecord(wrapped.message) && isRecord(wrapped.message.interactiveMessage)) return wrapped.message.interactiveMessage;
  const key = Object.keys(content).find((k) => k !== 'messageContextInfo' && isRecord(content[k]));
  return key === undefined ? undefined : (content[key] as Record<string, unknown>);
}

/** Makes the content mention exactly `jids` (every participant of the group, for mentionsEveryOne); changes it in place. */
export function setMentions(content: Record<string, unknown>, jids: string[]): void {
  const node = contextNode(content);
  if (!node) return;
  const contextInfo = isRecord(node.contextInfo) ? node.contextInfo : {};
  contextInfo.mentionedJid = [...jids];
  node.contextInfo = contextInfo;
}

/**
 * A mentioned address as the group lists the person: the participant whose address, phone address or @lid address it
 * is (so a mention by phone number works in a group that lists people by @lid); unknown people stay as given.
 */
export function asParticipant(jid: string, participants: readonly GroupParticipant[]): string {
  const found = participants.find((p) => p.id === jid || p.phoneNumber === jid || p.lid === jid);
  return found?.id ?? jid;
}

/** Whom the content mentions, if anyone. */
export function mentionsOf(content: Record<string, unknown>): string[] | undefined {
  for (const value of Object.values(content)) {
    if (isRecord(value) && isRecord(value.contextInfo) && Array.isArray(value.contextInfo.mentionedJid)) {
      return value.contextInfo.mentionedJid.filter((m): m is string => typeof m === 'string');
    }
  }
  return undefined;
}
