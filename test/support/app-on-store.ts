// The service on a store a test already filled (as a restart finds it): services to write with, then the real app.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/platform/config.js';
import { silentLogger } from '../../src/platform/logger.js';
import type { Store } from '../../src/platform/store/db.js';
import { createServices, type Services } from '../../src/services.js';
import { buildApp } from '../../src/app.js';

/** What a store is opened with across restarts: the key that seals its secrets, the global key and the data folder. */
export interface StoreKeys {
  uri: string;
  secretsKey: Buffer;
  globalKey: string;
  dataDir: string;
}

export function storeKeys(uri: string): StoreKeys {
  return { uri, secretsKey: randomBytes(32), globalKey: `global-${randomBytes(8).toString('hex')}`, dataDir: mkdtempSync(join(tmpdir(), 'sb-data-')) };
}

function configFor(keys: StoreKeys) {
  return loadConfig({
    AUTHENTICATION_API_KEY: keys.globalKey,
    DATA_DIR: keys.dataDir,
    DATABASE_CONNECTION_URI: keys.uri,
    LOG_LEVEL: 'silent',
    // WhatsApp Web instances must never reach WhatsApp from tests: a closed loopback port instead.
    WA_WEBSOCKET_URL: 'ws://127.0.0.1:9/ws/chat',
    WA_BUSINESS_URL: 'http://127.0.0.1:9',
  });
}

/** The services on the store, loaded but not started (what a command-line tool such as the import works with). */
export async function loadedServices(store: Store, keys: StoreKeys): Promise<Services> {
  const services = createServices({ config: configFor(keys), logger: silentLogger(), store, globalApiKey: keys.globalKey, secretsKey: keys.secretsKey });
  await services.registry.load();
  await services.sinks.load();
  return services;
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers field by field
type Json = any;

export interface AppOnStore {
  url: string;
  services: Services;
  app: FastifyInstance;
  api(method: string, path: string, options?: { body?: unknown; key?: string | null }): Promise<{ status: number; body: Json }>;
  /** Stops the app; the store stays open (the test owns it). */
  close(): Promise<void>;
}

/** The real app started on the store, as the service starts (registry loaded, connectors started). */
export async function appOnStore(store: Store, keys: StoreKeys): Promise<AppOnStore> {
  const config = configFor(keys);
  const services = createServices({ config, logger: silentLogger(), store, globalApiKey: keys.globalKey, secretsKey: keys.secretsKey });
  await services.start();
  const app = await buildApp(services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  config.serverUrl = url;
  return {
    url,
    services,
    app,
    async api(method, path, options = {}) {
      const key = options.key === undefined ? keys.globalKey : options.key;
      const headers: Record<string, string> = {};
      if (key !== null) headers.apikey = key;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] = 'application/json';
      }
      const response = await fetch(`${url}/messenger/${path}`, { method, headers, body });
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as Json) : null };
    },
    async close() {
      await app.close();
      await services.stop();
    },
  };
}

/** Removes the data folder of `keys` (after the test). */
export function removeDataDir(keys: StoreKeys): void {
  rmSync(keys.dataDir, { recursive: true, force: true });
}
