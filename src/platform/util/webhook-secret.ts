// Standard Webhooks secrets (`whsec_` + base64): their rule and their decoding into HMAC key bytes.

/** Fewest key bytes a secret must carry (Standard Webhooks secrets have 24 to 64). */
const minSecretBytes = 16;

/** Why `secret` cannot sign deliveries (`whsec_` and at least 16 base64-encoded bytes), or undefined when it can. */
export function secretProblem(secret: string): string | undefined {
  let ok = secret.startsWith('whsec_');
  try {
    ok &&= decodeSecret(secret).length >= minSecretBytes;
  } catch {
    ok = false;
  }
  return ok ? undefined : `must be whsec_ followed by at least ${minSecretBytes} base64-encoded bytes`;
}

/** Decodes a `whsec_<base64>` secret (prefix optional) to the HMAC key bytes; throws when it is malformed. */
export function decodeSecret(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new Error('webhook secret must look like whsec_<base64>');
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('webhook secret is empty');
  return key;
}
