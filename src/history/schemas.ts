// Request and answer schemas of the find, archive and mark-unread routes (validation and the OpenAPI document).
import { Type } from 'typebox';

const Text = (description?: string) => Type.String({ minLength: 1, ...(description ? { description } : {}) });
const Page = Type.Integer({ minimum: 1, description: 'Page number, from 1 (default 1)' });
const PageSize = (description: string) => Type.Integer({ minimum: 1, description });
const Time = Type.Union([Type.String({ minLength: 1 }), Type.Number({ minimum: 0 })], {
  description: 'An ISO 8601 date, or an epoch time in seconds or milliseconds',
});
const TimeRange = Type.Object(
  { gte: Type.Optional(Time), lte: Type.Optional(Time) },
  { description: 'Message times from gte and/or up to lte (each end applies alone)' },
);
const Address = (what: string) => Text(`${what}: an address (…@s.whatsapp.net, …@g.us, …@lid), or a phone number with country code`);

export const FindMessagesBody = Type.Object({
  where: Type.Optional(
    Type.Object({
      id: Type.Optional(Text('The stored message id (records[].id), not the WhatsApp id')),
      key: Type.Optional(
        Type.Object({
          id: Type.Optional(Text('The WhatsApp message id')),
          remoteJid: Type.Optional(Address('The chat')),
          fromMe: Type.Optional(Type.Boolean({ description: 'true: own messages only; false is ignored (both directions), as upstream' })),
          participant: Type.Optional(Address('The sender in a group')),
        }),
      ),
      messageType: Type.Optional(Text('conversation, imageMessage, reactionMessage…')),
      source: Type.Optional(Text('ios, android, web, desktop, unknown')),
      messageTimestamp: Type.Optional(TimeRange),
    }),
  ),
  page: Type.Optional(Page),
  offset: Type.Optional(PageSize('Page size (default 50)')),
});

export const FindChatsBody = Type.Object({
  where: Type.Optional(
    Type.Object({
      remoteJid: Type.Optional(Address('The chat')),
      messageTimestamp: Type.Optional(TimeRange),
    }),
  ),
  take: Type.Optional(Type.Integer({ minimum: 1, description: 'At most this many chats' })),
  skip: Type.Optional(Type.Integer({ minimum: 0, description: 'Chats skipped first' })),
  page: Type.Optional(Page),
  offset: Type.Optional(PageSize('Page size when take is not given (what the n8n node sends)')),
});

export const FindContactsBody = Type.Object({
  where: Type.Optional(
    Type.Object({
      remoteJid: Type.Optional(Address('The contact')),
      id: Type.Optional(Address('The contact (the n8n node sends the address here)')),
    }),
  ),
  page: Type.Optional(Page),
  offset: Type.Optional(PageSize('Page size (none: every contact)')),
});

export const FindStatusBody = Type.Object({
  where: Type.Optional(
    Type.Object({
      remoteJid: Type.Optional(Address('The chat')),
      id: Type.Optional(Text('The WhatsApp message id')),
    }),
  ),
  page: Type.Optional(Page),
  offset: Type.Optional(PageSize('Page size (default 50)')),
});

export const ChatQuery = Type.Object({ remoteJid: Type.Optional(Type.String({ description: 'The chat: an address, or a phone number' })) });

const LastMessage = Type.Object(
  {
    key: Type.Object({
      id: Text('The WhatsApp id of the chat’s newest message'),
      remoteJid: Address('The chat'),
      fromMe: Type.Boolean(),
      participant: Type.Optional(Address('Who sent it, for a received group message')),
    }),
    messageTimestamp: Type.Optional(Type.Integer({ minimum: 0, description: 'Its time (epoch seconds or milliseconds; default now)' })),
  },
  { description: "The chat's newest message (its chat wins over `chat`); without it the newest stored message is used" },
);

export const ArchiveBody = Type.Object({
  archive: Type.Boolean({ description: 'true archives, false unarchives' }),
  chat: Type.Optional(Address('The chat')),
  lastMessage: Type.Optional(LastMessage),
});

export const MarkUnreadBody = Type.Object({
  chat: Type.Optional(Address('The chat')),
  lastMessage: Type.Optional(LastMessage),
});

const Anything = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const answers = {
  messages: {
    200: Anything(
      '{messages: {total, pages, currentPage, records: [{id, key, pushName, messageType, message, messageTimestamp, instanceId, source, contextInfo, MessageUpdate: [{status}]}]}}',
    ),
  },
  chats: {
    200: Type.Array(
      Anything(
        '{id, remoteJid, pushName, profilePicUrl, updatedAt, windowStart, windowExpires, windowActive, lastMessage, unreadCount, isSaved, archived, markedUnread}',
      ),
    ),
  },
  contacts: { 200: Type.Array(Anything('{id, remoteJid, pushName, profilePicUrl, createdAt, updatedAt, instanceId, isGroup, isSaved, type}')) },
  statuses: { 200: Type.Array(Anything('{id, keyId, remoteJid, fromMe, participant, pollUpdates, status, messageId, instanceId, date}')) },
  chat: {
    200: Type.Union([Anything('{id, remoteJid, name, labels, createdAt, updatedAt, instanceId, unreadMessages, archived, markedUnread}'), Type.Null()], {
      description: 'The chat, or null',
    }),
  },
  archived: { 201: Type.Object({ chatId: Type.String(), archived: Type.Boolean({ description: 'The state now (upstream always answers true)' }) }) },
  markedUnread: { 201: Type.Object({ chatId: Type.String(), markedChatUnread: Type.Boolean() }) },
};
