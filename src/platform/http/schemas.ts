// JSON schemas shared by several routes (the same schemas drive validation and the OpenAPI document).
import { Type } from 'typebox';

export const InstanceParams = Type.Object({
  instance: Type.String({ description: 'Instance name' }),
});

export const ErrorEnvelope = Type.Object(
  {
    status: Type.Integer(),
    error: Type.String(),
    response: Type.Object({ message: Type.Array(Type.String()) }),
  },
  { description: 'Error' },
);

export const Quoted = Type.Object({
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
    key: Type.Object({ remoteJid: Type.String(), fromMe: Type.Boolean(), id: Type.String() }),
    message: Type.Object({}, { additionalProperties: true }),
    messageTimestamp: Type.String(),
    status: Type.String(),
    participant: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'Message result record' },
);

export const eventsArray = Type.Array(Type.String(), { description: 'Event names (empty: all events)' });

/**
 * A 201 answer documented by its description (its fields: the interface document); serialised as the route builds it.
 */
export function createdAnswer(description: string) {
  return { 201: Type.Object({}, { additionalProperties: true, description }) };
}

/** The seven behaviour settings, each optional (create and settings/set share them). */
export const settingsFields = {
  rejectCall: Type.Optional(Type.Boolean()),
  msgCall: Type.Optional(Type.String({ maxLength: 1000, description: 'Text sent to a caller whose call is rejected' })),
  groupsIgnore: Type.Optional(Type.Boolean()),
  alwaysOnline: Type.Optional(Type.Boolean()),
  readMessages: Type.Optional(Type.Boolean()),
  readStatus: Type.Optional(Type.Boolean()),
  syncFullHistory: Type.Optional(Type.Boolean()),
};
