// JSON schemas shared by several routes (the same schemas drive validation and the OpenAPI document).
import { Type, type TSchema } from 'typebox';

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

/**
 * Route options for an answer documented by its schema but sent as the route builds it (no field dropped or coerced
 * by a serializer compiled from the schema): the schema is there for the OpenAPI document.
 */
export const sentAsBuilt = { serializerCompiler: () => (data: unknown) => JSON.stringify(data) };

/** A nullable value: the type, or null. */
export const Nullable = <T extends TSchema>(schema: T, options: { description?: string } = {}) => Type.Union([schema, Type.Null()], options);

/** An answer that is not JSON (a file, a text), documented by its media type. */
export function rawAnswer(mediaType: string, description: string) {
  return { description, content: { [mediaType]: { schema: { type: 'string', format: mediaType.startsWith('text/') ? undefined : 'binary' } } } };
}

/** Evolution's success envelope of delete and logout. */
export const SuccessEnvelope = Type.Object({
  status: Type.Literal('SUCCESS'),
  error: Type.Literal(false),
  response: Type.Object({ message: Type.String() }),
});

/**
 * The schema with the example the docs page shows for it (its "Try it out" body): one that succeeds as it stands on a
 * linked instance, where a made-up one (`"number": "string"`) would be refused.
 */
export function withExample<T extends TSchema>(schema: T, example: Record<string, unknown>): T {
  return { ...schema, examples: [example] };
}
