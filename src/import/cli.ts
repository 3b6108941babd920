// Process entry of the Evolution import: Switchboard's configuration and store as the service loads them, then the
// import; exit 0 when every instance was imported or skipped, 1 when any failed, 2 when it could not run at all.
import 'dotenv/config';
import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ConfigError, loadConfig, type Config } from '../platform/config.js';
import { ProxyStore } from '../instances/proxies.js';
import { createLogger } from '../platform/logger.js';
import { openStore, type Store } from '../platform/store/db.js';
import { StartupError } from '../platform/startup-error.js';
import { resolveSecretsKey } from '../platform/util/data-dir.js';
import { parseImportOptions, usage, wantsHelp } from './options.js';
import { ImportProblem, reasonOf } from './problem.js';
import { importEvolution, openEvolutionSources } from './run.js';
import { sameDatabase } from './same-database.js';

const print = (line: string) => process.stdout.write(`${line}\n`);

/** The global key the service answers to, without creating one (the service generates it on its first start). */
function knownGlobalKey(config: Config): string {
  if (config.globalApiKey) return config.globalApiKey;
  const file = join(config.dataDir, 'global-api-key');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
}

/** The key sealing stored secrets; a dry run that finds none uses a throwaway one (it seals nothing it keeps). */
function secretsKeyOf(config: Config, dryRun: boolean): Buffer {
  if (dryRun && !config.secretsKey && !existsSync(join(config.dataDir, 'secrets-key'))) return randomBytes(32);
  return resolveSecretsKey(config.dataDir, config.secretsKey);
}

async function main(argv: readonly string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(usage);
    return 0;
  }
  const options = parseImportOptions(argv);
  const config = loadConfig();
  if (sameDatabase(options.from, config.databaseUri)) {
    throw new ImportProblem(
      "Switchboard's store (DATABASE_CONNECTION_URI) is Evolution's own database and schema: give Switchboard a database of its own, or add ?schema=switchboard",
    );
  }
  // Evolution first: a database or Redis out of reach stops the import before Switchboard's store is touched.
  const sources = await openEvolutionSources(options);
  // Log lines (warnings and worse) go to standard error, apart from the report.
  const logger = createLogger('warn', process.stderr);
  let store: Store;
  let createServices: typeof import('../services.js').createServices;
  try {
    // Loaded only now: the whole service (connectors, media) is not needed for the usage text or a bad command line.
    ({ createServices } = await import('../services.js'));
    store = await openStore(config.databaseUri, { poolSize: config.databasePoolSize });
  } catch (error) {
    await sources.close();
    throw error;
  }
  try {
    const globalApiKey = knownGlobalKey(config);
    const services = createServices({ config, logger, store, globalApiKey, secretsKey: secretsKeyOf(config, options.dryRun) });
    await services.registry.load();
    await services.sinks.load();
    const summary = await importEvolution(
      options,
      {
        db: store.db,
        registry: services.registry,
        sinks: services.sinks,
        removal: services.removal,
        proxies: new ProxyStore(store.db, services.box),
        kinds: services.kinds,
        sinkCreation: services.sinkCreation,
        globalApiKey,
      },
      print,
      sources,
    );
    return summary.outcomes.some((outcome) => outcome.result === 'failed') ? 1 : 0;
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ImportProblem || error instanceof ConfigError || error instanceof StartupError) {
      process.stderr.write(
        `import:evolution: ${error.message}\n${error instanceof ImportProblem && /--from|--only|argument|option/i.test(error.message) ? `\n${usage}` : ''}`,
      );
    } else {
      process.stderr.write(`import:evolution failed: ${reasonOf(error)}\n`);
    }
    process.exit(2);
  },
);
