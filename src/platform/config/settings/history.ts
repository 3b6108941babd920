// The history store's switches (Evolution's DATABASE_SAVE_* names): what is kept of messages, chats and contacts.
import { flag } from '../declare.js';

export const history = {
  saveNewMessages: flag({
    env: 'DATABASE_SAVE_DATA_NEW_MESSAGE',
    default: true,
    meaning:
      'Keep received messages (and those typed on the phone) for `chat/findMessages`. Off: they are announced (`messages.upsert`) but not stored, so a copy delivered twice is announced twice. Sends are always stored: the send queue and their statuses need them.',
  }),
  saveMessageUpdates: flag({
    env: 'DATABASE_SAVE_MESSAGE_UPDATE',
    default: true,
    meaning:
      "Keep each status a message goes through (`MessageUpdate` of `chat/findMessages`, `chat/findStatusMessage`). Off: only the message's current status is kept; `messages.update` events still go out.",
  }),
  saveContacts: flag({
    env: 'DATABASE_SAVE_DATA_CONTACTS',
    default: true,
    meaning: 'Keep a contact (address and push name) for each person a message is exchanged with (`chat/findContacts`, `contacts.upsert`/`contacts.update`).',
  }),
  saveChats: flag({
    env: 'DATABASE_SAVE_DATA_CHATS',
    default: true,
    meaning:
      'Keep a chat (last message time, unread count) for each address a message is exchanged with (`chat/findChats`, `chats.upsert`). Archiving and marking unread through the API are kept either way.',
  }),
};
