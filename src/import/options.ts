// The command line of the import: `--from <uri> [--instances-dir PATH] [--redis URI] [--redis-prefix P] [--only a,b]
// [--dry-run] [--with-history] [--replace]`, checked into ImportOptions.
import { parseArgs } from 'node:util';
import { ImportProblem } from './problem.js';
import type { ImportOptions } from './run.js';

/** Evolution's own default for CACHE_REDIS_PREFIX_KEY when it is not set. */
const evolutionRedisPrefix = 'evolution-cache';

export const usage = `Usage: npm run import:evolution -- --from <Evolution's DATABASE_CONNECTION_URI> [options]
  (in the Docker image: node dist/src/import/cli.js --from … [options])

Imports every Evolution 2.x instance into Switchboard's configured store (DATABASE_CONNECTION_URI, DATA_DIR):
name, integration and provider fields, instance key, settings, webhook, websocket/RabbitMQ/NATS switches and the
WhatsApp Web session with all its signal keys, so phones stay linked. Evolution is only read.

  --from URI            Evolution's database: postgresql://…[?schema=…] or mysql://…
  --instances-dir PATH  Evolution's instances folder (its /evolution/instances volume): the signal keys' files
  --redis URI           Evolution's Redis (CACHE_REDIS_URI) when its keys are in the cache
  --redis-prefix P      Evolution's CACHE_REDIS_PREFIX_KEY (default ${evolutionRedisPrefix})
  --only a,b            only the instances of these names
  --with-history        messages, chats and contacts too
  --dry-run             write nothing; print what would be done
  --replace             overwrite instances that already exist in Switchboard (default: skip them)
`;

export function parseImportOptions(argv: readonly string[]): ImportOptions {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(argv).values;
  } catch (error) {
    throw new ImportProblem(error instanceof Error ? error.message : String(error));
  }
  if (!values.from) throw new ImportProblem("--from is required: the URI of Evolution's database (its DATABASE_CONNECTION_URI)");
  const only = values.only
    ?.split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  if (values.only !== undefined && only?.length === 0) throw new ImportProblem('--only needs instance names separated by commas');
  return {
    from: values.from,
    ...(values['instances-dir'] ? { instancesDir: values['instances-dir'] } : {}),
    ...(values.redis ? { redis: values.redis } : {}),
    redisPrefix: values['redis-prefix'] || evolutionRedisPrefix,
    ...(only ? { only } : {}),
    dryRun: values['dry-run'] === true,
    withHistory: values['with-history'] === true,
    replace: values.replace === true,
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      from: { type: 'string' },
      'instances-dir': { type: 'string' },
      redis: { type: 'string' },
      'redis-prefix': { type: 'string' },
      only: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'with-history': { type: 'boolean' },
      replace: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
}

/** Whether the command line asks for the usage text. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}
