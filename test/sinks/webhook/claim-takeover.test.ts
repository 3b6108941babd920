// Claims of a dead node: the real service killed with SIGKILL while a webhook request is in flight (its delivery claimed
// for the request timeout and more) resumes delivering within seconds of the restart, not after the claim's lease.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { storeTargets } from '../../support/harness.js';
import { pgQuery, scratchSchema } from '../../support/postgres.js';
import { waitFor } from '../../support/wait.js';
import { freePort, killService, linkSandbox, serviceSetup, startService, waitUntilUp } from '../../support/service-process.js';

const targets = await storeTargets();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface ClaimRow {
  state: string;
  claimed_by: string | null;
  next_attempt_at: number;
}

/** How the store under test is reached: the service's URI, and the deliveries' claims read while it is down. */
interface StoreUnderTest {
  uri: string;
  claims(): Promise<ClaimRow[]>;
  dispose(): Promise<void>;
}

const claimsSql = "select state, claimed_by, next_attempt_at from deliveries where event = 'MESSAGES_UPSERT'";

async function storeUnderTest(name: string, dir: string): Promise<StoreUnderTest> {
  if (name === 'sqlite') {
    const file = join(dir, 'switchboard.db');
    return {
      uri: `file:${file}`,
      async claims() {
        const db = new Database(file, { readonly: true, fileMustExist: true });
        try {
          return db.prepare(claimsSql).all() as ClaimRow[];
        } finally {
          db.close();
        }
      },
      async dispose() {},
    };
  }
  const scratch = await scratchSchema();
  return {
    uri: scratch.uri,
    claims: async () =>
      (await pgQuery<ClaimRow>(claimsSql.replace('from deliveries', `from ${scratch.schema}.deliveries`))).map((row) => ({
        ...row,
        next_attempt_at: Number(row.next_attempt_at),
      })),
    dispose: () => scratch.drop(),
  };
}

/** A receiver on `port`: `hang` takes requests and never answers them; otherwise each is answered 200 and kept. */
async function receiverOn(port: number, mode: 'hang' | 'answer') {
  const received: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      if (mode === 'answer') res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** How the restarted node is told apart from its earlier life. */
interface Restart {
  /** NODE_ID of the first and of the second start. */
  nodeIds: [string, string];
  extra: Record<string, string>;
}

const cases = targets.flatMap((target) => [
  // The same NODE_ID (as a container keeps its name): on PostgreSQL the restarted node retires its earlier life at once;
  // on SQLite (one node per file) every earlier life is over at start.
  { target, how: 'the same NODE_ID', restart: { nodeIds: ['claims-node', 'claims-node'], extra: {} } as Restart },
  // Another NODE_ID: the earlier life is known dead once its heartbeat is older than NODE_DEAD_AFTER_MS.
  { target, how: 'a new NODE_ID', restart: { nodeIds: ['claims-first', 'claims-second'], extra: { NODE_DEAD_AFTER_MS: '4000' } } as Restart },
]);

describe.each(cases)('webhook claims of a killed node on $target.name, restarted with $how', ({ target, restart }) => {
  it.skipIf(!target.available)(
    'are taken over: the delivery in flight at the kill arrives within seconds of the restart, not after its lease',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sb-claims-'));
      dirs.push(dir);
      const store = await storeUnderTest(target.name, dir);
      const rxPort = await freePort();
      const { base, env, api } = await serviceSetup(join(dir, 'data'), store.uri, {
        // A claim lasts the request timeout + 30 s: a minute here, so only a take-over explains a quick delivery.
        WEBHOOK_REQUEST_TIMEOUT_MS: '30000',
        OUTBOUND_DENY_PRIVATE: 'false',
        ...restart.extra,
      });
      let service = startService({ ...env, NODE_ID: restart.nodeIds[0] });
      const hanging = await receiverOn(rxPort, 'hang');
      try {
        await waitUntilUp(base, service);
        await linkSandbox(api, 'claims-a', '4916000000081');
        const b = await linkSandbox(api, 'claims-b', '4916000000082');
        const hook = await api('POST', `webhook/set/${b.name}`, {
          webhook: { enabled: true, url: `http://127.0.0.1:${rxPort}/hook`, events: ['MESSAGES_UPSERT'] },
        });
        expect(hook.status, JSON.stringify(hook.body)).toBe(201);
        const sent = await api('POST', 'message/sendText/claims-a', { number: '4916000000082', text: 'in flight at the kill' });
        expect(sent.status, JSON.stringify(sent.body)).toBe(201);
        // The request is at the receiver, unanswered: the delivery is claimed by the running node.
        await waitFor(() => hanging.received.length === 1, 30_000);

        await killService(service);
        const [claimed] = await store.claims();
        expect(claimed.state).toBe('pending');
        expect(claimed.claimed_by).not.toBeNull();
        expect(claimed.next_attempt_at - Date.now()).toBeGreaterThan(40_000);

        await hanging.close();
        const answering = await receiverOn(rxPort, 'answer');
        try {
          service = startService({ ...env, NODE_ID: restart.nodeIds[1] });
          await waitUntilUp(base, service);
          const upAt = Date.now();
          await waitFor(() => answering.received.length >= 1, 20_000);
          const resumedMs = Date.now() - upAt;
          console.info(`${target.name}, ${restart.nodeIds.join(' then ')}: the delivery claimed at the kill arrived ${resumedMs} ms after the restart`);
          expect(JSON.parse(answering.received[0]).data.message.conversation).toBe('in flight at the kill');
          await waitFor(async () => (await api('GET', `webhook/deliveries/${b.name}?status=delivered`)).body.deliveries?.length === 1, 10_000);
        } finally {
          await answering.close();
        }
      } finally {
        await killService(service);
        await hanging.close().catch(() => undefined);
        await store.dispose();
      }
    },
    180_000,
  );
});
