// Process entry: configuration, store, services, HTTP server, graceful shutdown.
import 'dotenv/config';
import { resolve } from 'node:path';
import { loadConfig, ConfigError, type Config } from './platform/config.js';
import { createLogger } from './platform/logger.js';
import { logDestination } from './platform/log-format.js';
import { openStore } from './platform/store/db.js';
import { createServices } from './services.js';
import { buildApp } from './app.js';
import { resolveGlobalApiKey, resolveSecretsKey } from './platform/util/data-dir.js';
import { ensurePortFree, listenFailure } from './platform/net/port-check.js';
import { startupFailureText } from './platform/startup-error.js';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel, logDestination(config.logFormat));
  const global = resolveGlobalApiKey(config.dataDir, config.globalApiKey);
  if (global.generated) {
    // Printed once, on the start that generated it; it is kept in DATA_DIR/global-api-key.
    process.stdout.write(
      `\nGenerated global API key (stored in ${resolve(config.dataDir, 'global-api-key')}):\n\n    ${global.key}\n\nSet AUTHENTICATION_API_KEY to choose your own.\n\n`,
    );
  }
  if (global.staleFileRemoved) {
    logger.info(
      { file: resolve(config.dataDir, 'global-api-key') },
      'AUTHENTICATION_API_KEY is set and wins: removed the global key generated before, which no longer opens anything',
    );
  }
  // A port in use stops the start here, before the store is opened or any connector started.
  await ensurePortFree(config.host, config.port);
  const store = await openStore(config.databaseUri, { poolSize: config.databasePoolSize });
  const services = createServices({
    config,
    logger,
    store,
    globalApiKey: global.key,
    secretsKey: resolveSecretsKey(config.dataDir, config.secretsKey),
  });
  // Store state, workers and this node's share of the instances (store round trips, no instance opened before the node
  // listens), while the HTTP server is built (work of this process): neither waits for the other.
  const ready = services.prepare();
  // Its failure is handled once the server is built (below): not an unhandled rejection meanwhile.
  ready.catch(() => undefined);
  /** A start that fails here stops what started (no connector yet) and closes the store, then reports `error`. */
  const giveUp = async (error: unknown): Promise<never> => {
    await services.stop();
    await store.close();
    throw error;
  };
  const app = await buildApp(services).catch(async (error: unknown) => {
    await ready.catch(() => undefined);
    return giveUp(error);
  });
  // Fastify's own start (its plugins' remaining work, the routes' schemas compiled) also goes on beside the store work;
  // its failure is handled once that work is done (below).
  const appReady = new Promise<void>((resolve, reject) => app.ready((error) => (error ? reject(error) : resolve())));
  appReady.catch(() => undefined);
  await ready.catch(async (error: unknown) => {
    await appReady.catch(() => undefined);
    await app.close();
    return giveUp(error);
  });
  await appReady.catch(giveUp);
  // Taken between the check and now: reported as the check would have.
  await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => giveUp(listenFailure(error, config.host, config.port)));
  logger.info({ port: config.port, store: store.dialect, opening: services.lifecycle.openingCount() }, 'switchboard listening');
  // The owned instances open in the background, a bounded number at once (GET /health tells how many are left);
  // a stop meanwhile cuts it short and stops what opened.
  void services.openInstances();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await app.close();
    await services.stop();
    await store.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  // One line naming the setting to fix; the stack only when debugging (the configuration may not have loaded).
  const debugging = /^(debug|trace)$/i.test(process.env.LOG_LEVEL?.trim() ?? '');
  process.stderr.write(startupFailureText(error, debugging));
  process.exit(1);
});
