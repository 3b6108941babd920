// Crash safety of the send queue: the real service as a child process, killed with SIGKILL while sends are queued,
// started again on the same data; every accepted send reaches the recipient exactly once and in order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startReceiver, storeTargets } from '../support/harness.js';
import { pgQuery, scratchSchema } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';
import { killService, linkSandbox, serviceSetup, startService, waitUntilUp } from '../support/service-process.js';

const targets = await storeTargets();

interface StoreProbe {
  uri: string;
  /** Statuses of the instance's own messages by key id. */
  statuses(instanceId: string): Promise<Map<string, string>>;
  pendingQueue(): Promise<number>;
  dispose(): Promise<void>;
}

function sqliteProbe(dir: string): StoreProbe {
  const file = join(dir, 'switchboard.db');
  const read = <T>(sql: string, ...params: unknown[]): T[] => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  };
  return {
    uri: `file:${file}`,
    async statuses(instanceId) {
      const rows = read<{ key_id: string; status: string }>('select key_id, status from messages where instance_id = ? and from_me = 1', instanceId);
      return new Map(rows.map((r) => [r.key_id, r.status]));
    },
    async pendingQueue() {
      return read<{ n: number }>('select count(*) as n from send_queue')[0].n;
    },
    async dispose() {},
  };
}

async function postgresProbe(): Promise<StoreProbe> {
  const scratch = await scratchSchema();
  const query = <T>(sql: string, params: unknown[] = []) => pgQuery<T>(sql.replaceAll('$schema', scratch.schema), params);
  return {
    uri: scratch.uri,
    async statuses(instanceId) {
      const rows = await query<{ key_id: string; status: string }>('select key_id, status from $schema.messages where instance_id = $1 and from_me = 1', [
        instanceId,
      ]);
      return new Map(rows.map((r) => [r.key_id, r.status]));
    },
    async pendingQueue() {
      return Number((await query<{ n: string }>('select count(*) as n from $schema.send_queue'))[0].n);
    },
    dispose: () => scratch.drop(),
  };
}

describe.each(targets)('crash and restart of the service on $name', (target) => {
  it.skipIf(!target.available)(
    'delivers every queued send exactly once and in order after a SIGKILL',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sb-restart-'));
      const probe = target.name === 'sqlite' ? sqliteProbe(dir) : await postgresProbe();
      const rx = await startReceiver();
      const { base, env, api } = await serviceSetup(join(dir, 'data'), probe.uri, {
        WEBHOOK_RETRY_INITIAL_DELAY_SECONDS: '0.1',
        WEBHOOK_RETRY_MAX_DELAY_SECONDS: '0.5',
      });
      let service = startService(env);
      try {
        await waitUntilUp(base, service);

        const link = (name: string, number: string) => linkSandbox(api, name, number);
        const a = await link('crash-a', '4916000000001');
        const b = await link('crash-b', '4916000000002');
        const hook = await api('POST', 'webhook/set/crash-b', { webhook: { enabled: true, url: rx.url, events: ['MESSAGES_UPSERT'] } });
        expect(hook.status, JSON.stringify(hook.body)).toBe(201);

        const keys: string[] = [];
        const firstAcceptedAt = Date.now();
        for (let i = 0; i < 30; i++) {
          const res = await api('POST', 'message/sendText/crash-a', { number: '4916000000002', text: `queued ${i}`, delay: 150 });
          expect(res.status, JSON.stringify(res.body)).toBe(201);
          keys.push(res.body.key.id);
        }
        // 30 sends × 150 ms of typing: most are still queued about a second after the first was accepted.
        const wait = firstAcceptedAt + 1000 - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        await killService(service);
        const beforeRestart = upserts(rx).length;
        expect(beforeRestart).toBeLessThan(30);
        expect(await probe.pendingQueue()).toBeGreaterThan(0);

        service = startService(env);
        await waitUntilUp(base, service);
        await rx.waitFor(() => new Set(upserts(rx).map((e) => e.body.data.key.id)).size >= 30, 60_000);
        // Let any straggling duplicate show up before counting.
        await new Promise((r) => setTimeout(r, 1000));

        const events = upserts(rx);
        const received = events.map((e) => e.body.data.key.id as string);
        for (const k of keys) {
          // A webhook is at-least-once (a delivery cut by the kill is sent again with the same event id),
          // but the message itself must arrive as one event: one distinct event id per key.
          const ids = new Set(events.filter((e) => e.body.data.key.id === k).map((e) => e.body.id));
          expect(ids.size, `key ${k}`).toBe(1);
        }
        const firstArrival = received.filter((k, i) => received.indexOf(k) === i);
        expect(firstArrival).toEqual(keys);
        expect(events.map((e) => e.body.data.key.remoteJid).every((j) => j === a.owner)).toBe(true);
        expect(events.filter((e, i) => received.indexOf(e.body.data.key.id) === i).map((e) => e.body.data.message.conversation)).toEqual(
          keys.map((_, i) => `queued ${i}`),
        );

        await waitFor(async () => {
          const statuses = await probe.statuses(a.id);
          return keys.every((k) => statuses.get(k) === 'DELIVERY_ACK');
        }, 30_000).catch(async (error: unknown) => {
          const statuses = await probe.statuses(a.id);
          throw new Error(`${String(error)}: ${JSON.stringify(keys.map((k) => statuses.get(k)))}`);
        });
        const statuses = await probe.statuses(a.id);
        expect(statuses.size).toBe(30);
        expect([...statuses.values()].every((s) => s !== 'PENDING' && s !== 'ERROR')).toBe(true);
        expect(await probe.pendingQueue()).toBe(0);
        expect(b.owner).toBe('4916000000002@s.whatsapp.net');
      } finally {
        await killService(service);
        await rx.close();
        await probe.dispose().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      }
    },
    180_000,
  );
});

function upserts(rx: Awaited<ReturnType<typeof startReceiver>>) {
  return rx.of('messages.upsert', 'crash-b');
}
