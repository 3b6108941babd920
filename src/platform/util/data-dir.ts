// Files the service keeps in DATA_DIR: the generated global API key and the secrets key.
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { generateApiKey } from './api-keys.js';

function readOrCreate(path: string, create: () => string): { value: string; created: boolean } {
  if (existsSync(path)) return { value: readFileSync(path, 'utf8').trim(), created: false };
  const value = create();
  writeFileSync(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return { value, created: true };
}

/** Where the generated global key is kept. */
function globalApiKeyFile(dataDir: string): string {
  return join(dataDir, 'global-api-key');
}

/**
 * The global key from config, or the one generated on first start and kept in DATA_DIR. A configured key wins: a
 * generated file left from before no longer opens anything, so it is removed (`staleFileRemoved` says so, for the log).
 */
export function resolveGlobalApiKey(dataDir: string, configured: string | undefined) {
  const file = globalApiKeyFile(dataDir);
  if (configured) {
    const staleFileRemoved = existsSync(file);
    if (staleFileRemoved) rmSync(file, { force: true });
    return { key: configured, generated: false, staleFileRemoved };
  }
  mkdirSync(dataDir, { recursive: true });
  const { value, created } = readOrCreate(file, generateApiKey);
  return { key: value, generated: created, staleFileRemoved: false };
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
