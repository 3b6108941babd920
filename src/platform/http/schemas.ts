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
