// Crash safety of webhook deliveries: the real service as a child process, killed with SIGKILL while deliveries
// are pending and their receiver is down; receiver and service started again on the same data. Every event
// arrives, in order per instance, and any duplicate carries the same webhook-id / envelope id as its first copy.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../src/sinks/webhook/signing.js';
import { storeTargets } from '../../support/harness.js';
import { pgQuery, scratchSchema } from '../../support/postgres.js';
import { waitFor } from '../../support/wait.js';
import { freePort, killService, linkSandbox, serviceSetup, startService, waitUntilUp, type Api } from '../../support/service-process.js';

const targets = await storeTargets();

const messageCount = 20;
const numberA = '4916000000011';
const numberB = '4916000000012';

const receivers = new Set<Receiver>();

afterAll(async () => {
  for (const rx of [...receivers]) await rx.close();
});

interface DeliveryView {
  id: number;
  eventId: string;
  event: string;
  target: string;
  status: string;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
}

/** The whole delivery log of an instance (every page), oldest first. */
async function deliveryLog(api: Api, instance: string, status?: string): Promise<DeliveryView[]> {
  const all: DeliveryView[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 50; page++) {
    const query = new URLSearchParams({ limit: '200' });
    if (status) query.set('status', status);
    if (cursor) query.set('cursor', cursor);
    const res = await api('GET', `webhook/deliveries/${instance}?${query.toString()}`);
    if (res.status !== 200) throw new Error(`delivery log of ${instance}: ${res.status} ${JSON.stringify(res.body)}`);
    all.push(...(res.body.deliveries as DeliveryView[]));
    cursor = res.body.nextCursor as string | null;
    if (!cursor) break;
  }
  return all.sort((x, y) => x.id - y.id);
}

// ---------------------------------------------------------------------------------------------------------------
// The receiver: a real HTTP server on a port chosen up front, so it can be "down" first and come up later

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: a delivered body is inspected field by field
  body: any;
}

interface Receiver {
  events: Received[];
  listen(): Promise<void>;
  close(): Promise<void>;
}

function receiver(port: number): Receiver {
  const events: Received[] = [];
  let server: Server | undefined;
  const rx: Receiver = {
    events,
    async listen() {
      const s = createHttpServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          let body: unknown = null;
          try {
            body = JSON.parse(raw);
          } catch {
            // recorded as is; the assertions will show it
          }
          events.push({ headers: req.headers, raw, body });
          res.writeHead(200).end();
        });
      });
      await new Promise<void>((ok, fail) => {
        s.once('error', fail);
        s.listen(port, '127.0.0.1', () => {
          s.off('error', fail);
          ok();
        });
      });
      server = s;
      receivers.add(rx);
    },
    async close() {
      receivers.delete(rx);
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    },
  };
  return rx;
}

/** What an event stands for, independent of its copy: `upsert:<key>`, `send:<key>`, `<status>:<key>`. */
function logicalKey(e: Received): string {
  const b = e.body;
  if (b?.event === 'messages.upsert') return `upsert:${b.data?.key?.id}`;
  if (b?.event === 'send.message') return `send:${b.data?.key?.id}`;
  if (b?.event === 'messages.update') return `${b.data?.status}:${b.data?.keyId}`;
  return `other:${b?.event}`;
}

function firstCopies(events: Received[]): Received[] {
  const seen = new Set<string>();
  return events.filter((e) => {
    const k = logicalKey(e);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Stores: a temp SQLite file, or a PostgreSQL schema of its own

interface StoreUnderTest {
  uri: string;
  /** Pending deliveries not due before `after` (epoch ms): leases of claims cut by the kill. Read while the service is down. */
  leasedDeliveries(after: number): Promise<{ id: number; next_attempt_at: number }[]>;
  dispose(): Promise<void>;
}

const leasedSql = "select id, next_attempt_at from deliveries where state = 'pending' and next_attempt_at > ";

async function sqliteStore(dir: string): Promise<StoreUnderTest> {
  const file = join(dir, 'switchboard.db');
  return {
    uri: `file:${file}`,
    async leasedDeliveries(after) {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        return db.prepare(`${leasedSql}?`).all(after) as { id: number; next_attempt_at: number }[];
      } finally {
        db.close();
      }
    },
    async dispose() {},
  };
}

async function postgresStore(): Promise<StoreUnderTest> {
  const scratch = await scratchSchema();
  return {
    uri: scratch.uri,
    async leasedDeliveries(after) {
      const rows = await pgQuery(`${leasedSql.replace('from deliveries', `from ${scratch.schema}.deliveries`)}$1`, [after]);
      return rows.map((r) => ({ id: Number(r.id), next_attempt_at: Number(r.next_attempt_at) }));
    },
    dispose: () => scratch.drop(),
  };
}

// ---------------------------------------------------------------------------------------------------------------

describe.each(targets)('webhook deliveries across a SIGKILL of the service on $name', (target) => {
  it.skipIf(!target.available)(
    'delivers every pending event after the crash, in order per instance, duplicates with the same id',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sb-webhook-crash-'));
      const store = target.name === 'sqlite' ? await sqliteStore(dir) : await postgresStore();
      const rxPort = await freePort();
      const rx = receiver(rxPort);
      const rxUrl = `http://127.0.0.1:${rxPort}/hook`;
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      const { base, env, api } = await serviceSetup(join(dir, 'data'), store.uri, {
        WEBHOOK_RETRY_INITIAL_DELAY_SECONDS: '0.2',
        WEBHOOK_RETRY_MAX_DELAY_SECONDS: '0.5',
        WEBHOOK_RETRY_MAX_ATTEMPTS: '100',
        // A delivery claimed at the instant of the kill is taken over at the restart (claim-takeover.test.ts); a short
        // timeout would still bound the stall to this timeout + 30 s if it were not.
        WEBHOOK_REQUEST_TIMEOUT_MS: '2000',
        // Webhooks must not be refused for pointing at loopback.
        OUTBOUND_DENY_PRIVATE: 'false',
      });
      let service = startService(env);
      try {
        await waitUntilUp(base, service);

        const link = (name: string, number: string) => linkSandbox(api, name, number);
        const a = await link('A', numberA);
        const b = await link('B', numberB);

        // Both webhooks point at the receiver's port, where nothing listens yet; signed, so each copy carries webhook-id.
        const hookB = await api('POST', `webhook/set/${b.name}`, {
          webhook: { enabled: true, url: rxUrl, events: ['MESSAGES_UPSERT'], secret },
        });
        expect(hookB.status, JSON.stringify(hookB.body)).toBe(201);
        expect(hookB.body.webhook.webhook.signed).toBe(true);
        const hookA = await api('POST', `webhook/set/${a.name}`, {
          webhook: { enabled: true, url: rxUrl, events: ['MESSAGES_UPDATE', 'SEND_MESSAGE'], secret },
        });
        expect(hookA.status, JSON.stringify(hookA.body)).toBe(201);

        const keys: string[] = [];
        for (let i = 0; i < messageCount; i++) {
          const res = await api('POST', `message/sendText/${a.name}`, { number: numberB, text: `crash ${i}` });
          expect(res.status, JSON.stringify(res.body)).toBe(201);
          keys.push(res.body.key.id as string);
        }
        expect(new Set(keys).size).toBe(messageCount);

        // Every event is written and waits in the store: B one upsert per message, A send.message + SERVER_ACK +
        // DELIVERY_ACK per message, all pending, and each lane's head has already failed against the dead receiver.
        const expectedB = messageCount;
        const expectedA = 3 * messageCount;
        let pendingB: DeliveryView[] = [];
        let pendingA: DeliveryView[] = [];
        await waitFor(async () => {
          pendingB = await deliveryLog(api, b.name, 'pending');
          pendingA = await deliveryLog(api, a.name, 'pending');
          return pendingB.length === expectedB && pendingA.length === expectedA && pendingB[0].attempts >= 2 && pendingA[0].attempts >= 2;
        }, 30_000).catch((error: unknown) => {
          throw new Error(
            `${String(error)}: B pending ${pendingB.length}/${expectedB} (head attempts ${pendingB[0]?.attempts}), ` +
              `A pending ${pendingA.length}/${expectedA} (head attempts ${pendingA[0]?.attempts})\n${service.output.join('')}`,
          );
        });
        expect(pendingB.every((d) => d.event === 'MESSAGES_UPSERT' && d.target === 'instance')).toBe(true);
        expect(pendingA.filter((d) => d.event === 'SEND_MESSAGE')).toHaveLength(messageCount);
        expect(pendingA.filter((d) => d.event === 'MESSAGES_UPDATE')).toHaveLength(2 * messageCount);
        expect(pendingB[0].lastError ?? '').not.toBe('');
        expect(await deliveryLog(api, b.name)).toHaveLength(expectedB); // nothing delivered, dead or cancelled
        expect(await deliveryLog(api, a.name)).toHaveLength(expectedA);
        const laneB = pendingB.map((d) => d.eventId);
        const laneA = pendingA.map((d) => d.eventId);

        await killService(service);
        expect(service.child.signalCode).toBe('SIGKILL');
        // A delivery claimed at the instant of the kill is leased past now; the restarted node takes it over at start.
        for (const leased of await store.leasedDeliveries(Date.now() + 5000)) {
          console.info(`${target.name}: delivery ${leased.id} was claimed at the kill (lease ${leased.next_attempt_at - Date.now()} ms left)`);
        }

        // Both back: the receiver on the same port, the service on the same data.
        await rx.listen();
        service = startService(env);
        await waitUntilUp(base, service);
        const restartedAt = Date.now();

        const expectedKeys = new Set([...keys.map((k) => `upsert:${k}`), ...keys.flatMap((k) => [`send:${k}`, `SERVER_ACK:${k}`, `DELIVERY_ACK:${k}`])]);
        const missing = () => {
          const got = new Set(rx.events.map(logicalKey));
          return [...expectedKeys].filter((k) => !got.has(k));
        };
        await waitFor(() => missing().length === 0, 60_000).catch(async (error: unknown) => {
          const stuck = [...(await deliveryLog(api, a.name, 'pending')), ...(await deliveryLog(api, b.name, 'pending'))]
            .slice(0, 3)
            .map((d) => `${d.id} ${d.event} attempts=${d.attempts} next=${d.nextAttemptAt} error=${d.lastError}`);
          throw new Error(
            `${String(error)}: ${missing().length} of ${expectedKeys.size} events missing, e.g. ${missing().slice(0, 5).join(', ')}; ` +
              `still pending: ${stuck.join(' | ')}\n${service.output.join('')}`,
          );
        });

        const catchUpMs = Date.now() - restartedAt;

        // The delivery log ends with every delivery delivered.
        let logB: DeliveryView[] = [];
        let logA: DeliveryView[] = [];
        await waitFor(async () => {
          logB = await deliveryLog(api, b.name);
          logA = await deliveryLog(api, a.name);
          return [...logA, ...logB].every((d) => d.status === 'delivered');
        }, 15_000).catch((error: unknown) => {
          const other = [...logA, ...logB].filter((d) => d.status !== 'delivered').map((d) => `${d.id}:${d.status}`);
          throw new Error(`${String(error)}: not delivered: ${other.join(', ')}`);
        });
        expect(logB.map((d) => d.eventId)).toEqual(laneB);
        expect(logA.map((d) => d.eventId)).toEqual(laneA);
        // Let any straggling duplicate show up before counting.
        await new Promise((r) => setTimeout(r, 500));

        const events = [...rx.events];
        // Nothing unexpected, nothing missing.
        expect(events.filter((e) => !expectedKeys.has(logicalKey(e))).map(logicalKey)).toEqual([]);
        expect(missing()).toEqual([]);

        // Every copy is signed, and its webhook-id is the envelope id.
        for (const e of events) {
          const verified = verifyWebhook(secret, e.headers, e.raw);
          expect(verified, e.raw).toMatchObject({ valid: true, id: e.body.id });
          expect(e.headers['webhook-id']).toBe(e.body.id);
          expect(e.body.destination).toBe(rxUrl);
        }

        // At least once: a duplicate is the same event (same id) as its first copy, never a new one.
        const firstIdOf = new Map<string, string>();
        for (const e of events) {
          const k = logicalKey(e);
          const first = firstIdOf.get(k);
          if (first === undefined) firstIdOf.set(k, e.body.id as string);
          else expect(e.body.id, `duplicate of ${k}`).toBe(first);
        }
        const duplicates = events.length - firstIdOf.size;

        // In order per instance: first copies arrive in lane order (the order the events were written).
        const ofB = events.filter((e) => e.body.instance === b.name);
        const ofA = events.filter((e) => e.body.instance === a.name);
        expect(ofB.length + ofA.length).toBe(events.length);
        expect(firstCopies(ofB).map((e) => e.body.id)).toEqual(laneB);
        expect(firstCopies(ofA).map((e) => e.body.id)).toEqual(laneA);
        // B: one upsert per message, in send order, from A.
        expect(firstCopies(ofB).map((e) => e.body.data.key.id)).toEqual(keys);
        expect(firstCopies(ofB).map((e) => e.body.data.message.conversation)).toEqual(keys.map((_, i) => `crash ${i}`));
        expect(ofB.every((e) => e.body.event === 'messages.upsert' && e.body.data.key.remoteJid === a.owner)).toBe(true);
        // A: send.message in send order; per message send.message, then SERVER_ACK, then DELIVERY_ACK.
        const firstA = firstCopies(ofA).map(logicalKey);
        expect(firstA.filter((k) => k.startsWith('send:'))).toEqual(keys.map((k) => `send:${k}`));
        for (const k of keys) {
          const sent = firstA.indexOf(`send:${k}`);
          const acked = firstA.indexOf(`SERVER_ACK:${k}`);
          const delivered = firstA.indexOf(`DELIVERY_ACK:${k}`);
          expect(sent, k).toBeGreaterThanOrEqual(0);
          expect(acked, k).toBeGreaterThan(sent);
          expect(delivered, k).toBeGreaterThan(acked);
        }
        // The receiver was down until the old process was dead, so a duplicate here could only come from the restart itself.
        if (duplicates > 0) console.warn(`${target.name}: ${duplicates} duplicate deliveries (same ids) after the restart`);
        if (process.env.WEBHOOK_CRASH_VERBOSE === '1')
          console.log(`${target.name}: all ${expectedKeys.size} events received ${catchUpMs} ms after the restart`);
      } finally {
        await killService(service);
        await rx.close();
        await store.dispose().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
