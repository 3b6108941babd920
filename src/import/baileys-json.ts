// Baileys credentials and signal keys as Evolution stored them (BufferJSON text, sometimes stringified twice), decoded.
import { BufferJSON, type AuthenticationCreds } from 'baileys';
import { ImportProblem, reasonOf } from './problem.js';

/**
 * Parses BufferJSON text (Buffers come back as Buffers). `times` 2: the text is the JSON of a string that holds the
 * BufferJSON text (Evolution's `Session.creds` and its Redis cache stringify once more); key files are encoded once.
 */
export function parseBufferJson(textValue: string, what: string, times: 1 | 2): unknown {
  let value: unknown;
  try {
    value = JSON.parse(textValue, BufferJSON.reviver);
    if (times === 2) {
      if (typeof value !== 'string') throw new Error('expected the JSON text of a string');
      value = JSON.parse(value, BufferJSON.reviver);
    }
  } catch (error) {
    throw new ImportProblem(`${what} is not valid JSON (${reasonOf(error)})`);
  }
  return value;
}

/** The fields every Baileys credentials object has, checked so a damaged row fails with a clear line. */
const requiredCreds = ['noiseKey', 'signedIdentityKey', 'signedPreKey', 'registrationId', 'advSecretKey'] as const;

/**
 * Decodes stored credentials: `Session.creds` and a Redis `creds` field hold them stringified twice, a creds.json file
 * once. An object after the first parse is taken as it is (liberal in what is read).
 */
export function decodeCreds(textValue: string, what: string): AuthenticationCreds {
  let value: unknown;
  try {
    value = JSON.parse(textValue, BufferJSON.reviver);
    if (typeof value === 'string') value = JSON.parse(value, BufferJSON.reviver);
  } catch (error) {
    throw new ImportProblem(`${what} is not valid JSON (${reasonOf(error)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ImportProblem(`${what} does not hold Baileys credentials (not an object)`);
  const missing = requiredCreds.filter((field) => !(field in value));
  if (missing.length > 0) throw new ImportProblem(`${what} does not hold Baileys credentials (${missing.join(', ')} missing)`);
  // Checked above for the fields the connector relies on; the rest is as Baileys wrote it.
  return value as AuthenticationCreds;
}
