// The send routes' bodies and answer: the same schemas drive validation, the OpenAPI document and the handlers' types.
import { Type, type Static } from 'typebox';

const Quoted = Type.Object({
  key: Type.Object({
    id: Type.String({ minLength: 1 }),
    remoteJid: Type.Optional(Type.String()),
    fromMe: Type.Optional(Type.Boolean()),
    participant: Type.Optional(Type.String()),
  }),
  message: Type.Optional(Type.Object({ conversation: Type.Optional(Type.String()) })),
});

/** Fields every send body may carry. */
export const commonSendFields = {
  number: Type.String({ minLength: 1, description: 'Recipient: phone number with country code, group id or full address' }),
  delay: Type.Optional(Type.Integer({ minimum: 0, maximum: 300000, description: 'Milliseconds of typing shown before the send' })),
  linkPreview: Type.Optional(Type.Boolean()),
  mentionsEveryOne: Type.Optional(Type.Boolean()),
  mentioned: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  quoted: Type.Optional(Quoted),
};

export const MessageResult = Type.Object(
  {
    key: Type.Object({
      remoteJid: Type.String(),
      fromMe: Type.Boolean(),
      id: Type.String(),
      remoteJidAlt: Type.Optional(Type.String({ description: "The recipient's other address (its @lid one for a phone one, or the reverse), when known" })),
    }),
    message: Type.Object({}, { additionalProperties: true }),
    messageTimestamp: Type.String(),
    status: Type.String(),
    participant: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'Message result record' },
);

/** Longest text, caption or text status taken (WhatsApp clients stop at 65,536 characters). */
export const maxTextLength = 65536;
export const TextBody = Type.Object({ ...commonSendFields, text: Type.String({ minLength: 1, maxLength: maxTextLength }) });

export const MediaBody = Type.Object({
  ...commonSendFields,
  mediatype: Type.Enum(['image', 'video', 'audio', 'document']),
  mimetype: Type.Optional(Type.String()),
  caption: Type.Optional(Type.String({ maxLength: maxTextLength })),
  media: Type.String({ minLength: 1, description: 'http(s) URL, base64 or data URL' }),
  fileName: Type.Optional(Type.String({ maxLength: 255 })),
});

export const StickerBody = Type.Object({
  ...commonSendFields,
  sticker: Type.String({ minLength: 1, description: 'http(s) URL, base64 or data URL of an image' }),
});

const Row = Type.Object({ title: Type.String({ minLength: 1 }), description: Type.Optional(Type.String()), rowId: Type.Optional(Type.String()) });
const Section = Type.Object({ title: Type.Optional(Type.String()), rows: Type.Array(Row, { minItems: 1 }) });
export const ListBody = Type.Object({
  ...commonSendFields,
  title: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  buttonText: Type.Optional(Type.String()),
  footerText: Type.Optional(Type.String()),
  values: Type.Optional(Type.Array(Section, { minItems: 1 })),
  sections: Type.Optional(Type.Array(Section, { minItems: 1 })),
});

export const PollBody = Type.Object({
  ...commonSendFields,
  name: Type.String({ minLength: 1 }),
  selectableCount: Type.Integer({ minimum: 0 }),
  values: Type.Array(Type.String(), { minItems: 2 }),
});

export const LocationBody = Type.Object({
  ...commonSendFields,
  latitude: Type.Number({ minimum: -90, maximum: 90 }),
  longitude: Type.Number({ minimum: -180, maximum: 180 }),
  name: Type.String({ description: 'The name of the place (may be empty)' }),
  address: Type.String({ description: 'The address of the place (may be empty)' }),
});

const ContactCard = Type.Object({
  fullName: Type.String({ minLength: 1 }),
  phoneNumber: Type.String({ minLength: 10, description: 'The number as shown on the card, e.g. +55 11 99999-9999' }),
  wuid: Type.Optional(Type.String({ minLength: 10, description: 'The WhatsApp number (digits); derived from phoneNumber when absent' })),
  organization: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
});
export const ContactBody = Type.Object({
  ...commonSendFields,
  contact: Type.Array(ContactCard, { minItems: 1, uniqueItems: true }),
});

export const ReactionBody = Type.Object({
  key: Type.Object({
    id: Type.String({ minLength: 1 }),
    remoteJid: Type.String({ minLength: 1, description: 'The chat of the message reacted to' }),
    fromMe: Type.Boolean(),
    participant: Type.Optional(Type.String({ minLength: 1, description: 'Who wrote the message, in a group' })),
  }),
  reaction: Type.String({ description: 'One emoji; an empty string removes the reaction' }),
});

export const StatusBody = Type.Object({
  type: Type.Enum(['text', 'image', 'video', 'audio']),
  content: Type.String({ minLength: 1, description: 'The text of a text status (at most 65,536 characters), else the media (URL, base64 or data URL)' }),
  caption: Type.Optional(Type.String({ maxLength: maxTextLength })),
  backgroundColor: Type.Optional(Type.String()),
  font: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
  allContacts: Type.Optional(Type.Boolean()),
  statusJidList: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
});

export type TextSend = Static<typeof TextBody>;
export type MediaSend = Static<typeof MediaBody>;
export type StickerSend = Static<typeof StickerBody>;
export type ListSend = Static<typeof ListBody>;
export type PollSend = Static<typeof PollBody>;
export type LocationSend = Static<typeof LocationBody>;
export type ContactSend = Static<typeof ContactBody>;
export type ReactionSend = Static<typeof ReactionBody>;
export type StatusSend = Static<typeof StatusBody>;
