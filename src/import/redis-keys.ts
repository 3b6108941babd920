// Signal keys in Evolution's Redis cache: one hash per instance, `<prefix>:instance:<instance id>`, a field per key
// (`<type>-<id>`, and `creds` when CACHE_REDIS_SAVE_INSTANCES=true), each value BufferJSON text stringified twice.
import { Redis } from 'ioredis';
import { parseBufferJson } from './baileys-json.js';
import { keyOfField } from './key-names.js';
import { ImportProblem, reasonOf } from './problem.js';
import type { FoundKeys, SignalKey } from './signal-keys.js';

export class RedisKeys {
  private constructor(
    private readonly client: Redis,
    private readonly prefix: string,
  ) {}

  /** Connects (read only: the import sends HGETALL and nothing that writes). */
  static async open(uri: string, prefix: string): Promise<RedisKeys> {
    const client = new Redis(uri, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => null });
    // Errors surface through the commands; without a listener ioredis would also print them.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      client.disconnect();
      throw new ImportProblem(`cannot connect to Redis (--redis): ${reasonOf(error)}`);
    }
    return new RedisKeys(client, prefix);
  }

  /** The hash that holds an instance's keys. */
  hashOf(instanceId: string): string {
    return `${this.prefix}:instance:${instanceId}`;
  }

  /** The instance's keys, or null when Redis holds no hash for it. */
  async read(instanceId: string): Promise<FoundKeys | null> {
    const hash = this.hashOf(instanceId);
    const fields = await this.client.hgetall(hash);
    const names = Object.keys(fields).sort();
    if (names.length === 0) return null;
    const keys: SignalKey[] = [];
    const ignored: string[] = [];
    let credsText: string | null = null;
    for (const field of names) {
      if (field === 'creds') {
        credsText = fields[field];
        continue;
      }
      const key = keyOfField(field);
      if (!key) {
        ignored.push(field);
        continue;
      }
      keys.push({ ...key, value: parseBufferJson(fields[field], `Redis field ${hash} ${field}`, 2) });
    }
    return { where: `Redis hash ${hash}`, keys, credsText, ignored };
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
