// Baileys credentials and signal keys as Evolution stored them (BufferJSON text, sometimes stringified twice), decoded.
import { BufferJSON, type AuthenticationCreds } from 'baileys';
import { ImportProblem, reasonOf } from './problem.js';

/**
 * Parses BufferJSON text; when it holds a JSON string (Evolution's `Session.creds` and its Redis cache stringify the
 * JSON text once more), parses that string too. Buffers come back as Buffers.
 */
export function parseBufferJson(textValue: string, what: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(textValue, BufferJSON.reviver);
    if (typeof value === 'string') value = JSON.parse(value, BufferJSON.reviver);
  } catch (error) {
    throw new ImportProblem(`${what} is not valid JSON (${reasonOf(error)})`);
  }
  return value;
}

/** The fields every Baileys credentials object has, checked so a damaged row fails with a clear line. */
const requiredCreds = ['noiseKey', 'signedIdentityKey', 'signedPreKey', 'registrationId', 'advSecretKey'] as const;

/** Decodes stored credentials (`Session.creds`, a Redis `creds` field or a creds.json file). */
export function decodeCreds(textValue: string, what: string): AuthenticationCreds {
  const value = parseBufferJson(textValue, what);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ImportProblem(`${what} does not hold Baileys credentials (not an object)`);
  const missing = requiredCreds.filter((field) => !(field in value));
  if (missing.length > 0) throw new ImportProblem(`${what} does not hold Baileys credentials (${missing.join(', ')} missing)`);
  // Checked above for the fields the connector relies on; the rest is as Baileys wrote it.
  return value as AuthenticationCreds;
}
