// The creation fields of a kind that takes nothing special: `number` kept as given, `token` the instance API key.
import type { CreationFields, CreationInput } from '../core/connector-kind.js';

export function plainCreationFields(input: CreationInput): CreationFields {
  return { number: input.number ?? null, providerToken: null, tokenIsApiKey: true };
}
