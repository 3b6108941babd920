// Files the service keeps in DATA_DIR: the generated global API key and the secrets key.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { generateApiKey } from './api-keys.js';

function readOrCreate(path: string, create: () => string): { value: string; created: boolean } {
  if (existsSync(path)) return { value: readFileSync(path, 'utf8').trim(), created: false };
  const value = create();
  writeFileSync(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return { value, created: true };
}

/** The global key from config, or the one generated on first start and kept in DATA_DIR. */
export function resolveGlobalApiKey(dataDir: string, configured: string | undefined) {
  if (configured) return { key: configured, generated: false };
  mkdirSync(dataDir, { recursive: true });
  const { value, created } = readOrCreate(join(dataDir, 'global-api-key'), generateApiKey);
  return { key: value, generated: created };
}

/** The key that seals stored secrets: SECRETS_KEY (base64, 32 bytes) or one generated in DATA_DIR. */
export function resolveSecretsKey(dataDir: string, configured: string | undefined): Buffer {
  if (configured) {
    const key = Buffer.from(configured, 'base64');
    if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
    return key;
  }
  mkdirSync(dataDir, { recursive: true });
  const { value } = readOrCreate(join(dataDir, 'secrets-key'), () => randomBytes(32).toString('base64'));
  return Buffer.from(value, 'base64');
}
