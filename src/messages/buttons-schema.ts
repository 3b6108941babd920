// The body of sendButtons: the common send fields, the texts around the buttons, and the buttons by type.
import { Type, type Static } from 'typebox';
import { commonSendFields, maxTextLength } from './send-schemas.js';

const Button = Type.Object({
  type: Type.Enum(['reply', 'copy', 'url', 'call', 'pix']),
  displayText: Type.Optional(Type.String({ description: 'The text on the button (reply, copy, url, call)' })),
  id: Type.Optional(Type.String({ description: 'reply: the id answered when the button is pressed' })),
  copyCode: Type.Optional(Type.String({ description: 'copy: the text copied' })),
  url: Type.Optional(Type.String({ description: 'url: the link opened' })),
  phoneNumber: Type.Optional(Type.String({ description: 'call: the number called' })),
  currency: Type.Optional(Type.String({ description: 'pix: the currency (e.g. BRL)' })),
  name: Type.Optional(Type.String({ description: 'pix: the merchant name' })),
  keyType: Type.Optional(Type.Enum(['phone', 'email', 'cpf', 'cnpj', 'random'], { description: 'pix: the kind of PIX key' })),
  key: Type.Optional(Type.String({ description: 'pix: the PIX key' })),
});

export const ButtonsBody = Type.Object({
  ...commonSendFields,
  title: Type.Optional(Type.String({ maxLength: maxTextLength, description: 'The text above the buttons, in bold (required unless the button is pix)' })),
  description: Type.Optional(Type.String({ maxLength: maxTextLength })),
  footer: Type.Optional(Type.String({ maxLength: maxTextLength })),
  thumbnailUrl: Type.Optional(Type.String({ minLength: 1, description: 'An image shown above the text: http(s) URL, base64 or data URL' })),
  buttons: Type.Array(Button, { description: 'reply buttons (at most 3, alone), or copy/url/call buttons, or one pix button' }),
});

export type ButtonsSend = Static<typeof ButtonsBody>;
