// Any node answers any request: the routes needing an instance's live connection are carried to the node owning it and
// answered as that node answers; a dead, moving or unreachable owner is a 503 with Retry-After, never a 500.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startFleet, storeTargets, type TestApp } from '../../support/harness.js';
import { freePort } from '../../support/service-process.js';
import { uniqueName, uniqueNumber } from '../../support/unique.js';
import { waitFor } from '../../support/wait.js';

const targets = await storeTargets();
const pg = targets.find((t) => t.name === 'postgres');
const heartbeatMs = 200;
/** What the app derives from the heartbeat: a moving instance is waited for two beats and a second. */
const moveWaitMs = 2 * heartbeatMs + 1000;

/** A stand-in for another node: records what reaches it and answers with a status, headers and body of its own. */
async function fakeNode() {
  const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: Buffer }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(202, {
        'content-type': 'application/json; charset=utf-8',
        'content-disposition': 'attachment; filename="answer.json"',
        'retry-after': '7',
        'x-ratelimit-remaining': '0',
      });
      res.end(JSON.stringify({ answeredBy: 'the owner', n: seen.length }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function linkedSandbox(t: TestApp, prefix: string) {
  const name = uniqueName(prefix);
  const number = uniqueNumber('4917');
  const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX', qrcode: true } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const scan = await t.api('POST', 'sandbox/scan', { body: { code: created.body.qrcode.code, number } });
  expect(scan.status, JSON.stringify(scan.body)).toBe(200);
  return {
    name,
    number,
    id: created.body.instance.instanceId as string,
    apikey: created.body.hash.apikey as string,
    owner: scan.body.instance.owner as string,
  };
}

describe('live operations carried to the owner node', () => {
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  let one: TestApp;
  let two: TestApp;

  beforeAll(async () => {
    if (!pg?.available) return;
    fleet = await startFleet(2, { NODE_HEARTBEAT_INTERVAL_MS: String(heartbeatMs), NODE_DEAD_AFTER_MS: '1000' });
    [one, two] = fleet.nodes as [TestApp, TestApp];
    // Node 2 answers requests but owns nothing: its heartbeat stops, so node 1 counts it out and owns every instance
    // it creates (node 2's HTTP side keeps working, which is all these tests ask of it).
    two.services.nodes.tick = async () => undefined;
    await waitFor(async () => {
      const cluster = await one.api('GET', 'cluster');
      return cluster.body.nodes.some((n: { incarnation: string; state: string }) => n.incarnation === two.services.nodes.incarnation && n.state === 'dead');
    }, 10_000);
  });
  afterAll(async () => {
    await fleet?.close();
  });

  /** Names the owner of an instance in the store (a fake node's; node 1 then lets it go), or none. */
  async function own(instanceId: string, owner: string | null) {
    await one.services.store.db.updateTable('instance_owners').set({ owner, since: Date.now() }).where('instance_id', '=', instanceId).execute();
  }

  /** Waits until node 1 owns the instance again (it takes free rows and rows of dead or stopped nodes). */
  async function backToOne(instanceId: string) {
    await waitFor(() => one.services.lifecycle.connectorOf(instanceId) !== undefined, 10_000);
  }

  /** Node 2 learns the instances created on node 1 (until the registry follows the store by itself, it reads it at start). */
  async function twoLearns() {
    await two.services.registry.load();
    await two.services.sinks.load();
  }

  /**
   * A node that is alive in the store at `address` (its heartbeat far ahead, so it stays alive through the test);
   * answers how to stop it (marked stopped: node 1 takes back what it owned).
   */
  async function aliveNode(incarnation: string, address: string) {
    const now = Date.now();
    const db = one.services.store.db;
    await db
      .insertInto('nodes')
      .values({ incarnation, node_id: incarnation, address, started_at: now, heartbeat_at: now + 3600_000, stopped_at: null })
      .execute();
    return () => db.updateTable('nodes').set({ stopped_at: Date.now() }).where('incarnation', '=', incarnation).execute();
  }

  it.skipIf(!pg?.available)('answers from node 2 what node 1, the owner, answers, and node 2 never opens a connection of its own', async () => {
    const a = await linkedSandbox(one, 'fw-a');
    const b = await linkedSandbox(one, 'fw-b');
    const unlinkedName = uniqueName('fw-c');
    const unlinked = await one.api('POST', 'instance/create', { body: { instanceName: unlinkedName, integration: 'SANDBOX' } });
    expect(unlinked.status, JSON.stringify(unlinked.body)).toBe(201);
    const c = { name: unlinkedName, id: unlinked.body.instance.instanceId as string };
    // Created on node 1, owned by node 1 (the only live node).
    const owners = await one.services.store.db.selectFrom('instance_owners').select('owner').where('instance_id', 'in', [a.id, b.id, c.id]).execute();
    expect(owners.map((o) => o.owner)).toEqual([one.services.nodes.incarnation, one.services.nodes.incarnation, one.services.nodes.incarnation]);
    await twoLearns();

    // Connection state: node 1's live state, as node 1 answers it.
    const state = await two.api('GET', `instance/connectionState/${a.name}`);
    expect(state.status, JSON.stringify(state.body)).toBe(200);
    expect(state.body).toEqual((await one.api('GET', `instance/connectionState/${a.name}`)).body);
    expect(state.body.instance.state).toBe('open');
    expect(state.headers.get('x-request-id')).toBeTruthy();

    // Connect an unlinked instance through node 2: the QR code is node 1's, and node 1 accepts it.
    const connect = await two.api('GET', `instance/connect/${c.name}`);
    expect(connect.status, JSON.stringify(connect.body)).toBe(200);
    expect(connect.body.code).toEqual(expect.any(String));
    const scan = await one.api('POST', 'sandbox/scan', { body: { code: connect.body.code, number: uniqueNumber('4917') } });
    expect(scan.status, JSON.stringify(scan.body)).toBe(200);
    expect(scan.body.instance.instanceName).toBe(c.name);
    await waitFor(async () => (await two.api('GET', `instance/connectionState/${c.name}`)).body.instance?.state === 'open', 5000);

    // A send through node 2 (the owner prepares it), read on the receiving side and marked read through node 2.
    const sent = await two.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'through node 2' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const keyId = sent.body.key.id as string;
    const db = one.services.store.db;
    const rowOf = (instanceId: string) =>
      db.selectFrom('messages').select(['status']).where('instance_id', '=', instanceId).where('key_id', '=', keyId).executeTakeFirst();
    await waitFor(async () => (await rowOf(b.id)) !== undefined, 10_000);
    const presence = await two.api('POST', `chat/sendPresence/${b.name}`, { body: { number: a.number, presence: 'composing', delay: 0 } });
    expect(presence.status, JSON.stringify(presence.body)).toBe(201);
    expect(presence.body).toEqual({ presence: 'composing' });
    const read = await two.api('POST', `chat/markMessageAsRead/${b.name}`, { body: { readMessages: [{ remoteJid: a.owner, fromMe: false, id: keyId }] } });
    expect(read.status, JSON.stringify(read.body)).toBe(201);
    await waitFor(async () => (await rowOf(a.id))?.status === 'READ', 10_000);

    // A group operation.
    const group = await two.api('POST', `group/create/${a.name}`, { body: { subject: 'Across nodes', participants: [b.number] } });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    expect(group.body.id).toMatch(/@g\.us$/);
    const groups = await two.api('GET', `group/fetchAllGroups/${b.name}?getParticipants=false`);
    expect(groups.status).toBe(200);
    expect(groups.body.map((g: { subject: string }) => g.subject)).toContain('Across nodes');

    // Restart, logout and delete, as node 1 answers them.
    const restart = await two.api('POST', `instance/restart/${c.name}`);
    expect(restart.status, JSON.stringify(restart.body)).toBe(200);
    const logout = await two.api('DELETE', `instance/logout/${a.name}`);
    expect(logout.status, JSON.stringify(logout.body)).toBe(200);
    expect(logout.body).toEqual({ status: 'SUCCESS', error: false, response: { message: 'Instance logged out' } });
    expect((await one.api('GET', `instance/connectionState/${a.name}`)).body.instance.state).toBe('close');
    const again = await two.api('DELETE', `instance/logout/${a.name}`);
    expect(again.status).toBe(400);
    expect(again.body).toEqual((await one.api('DELETE', `instance/logout/${a.name}`)).body);
    const deleted = await two.api('DELETE', `instance/delete/${c.name}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body).toEqual({ status: 'SUCCESS', error: false, response: { message: 'Instance deleted' } });
    expect(one.services.registry.byInstanceName(c.name)).toBeUndefined();

    for (const id of [a.id, b.id, c.id]) expect(two.services.lifecycle.connectorOf(id)).toBeUndefined();
  });

  it.skipIf(!pg?.available)(
    'carries method, path, query, body bytes (JSON and multipart) and the caller key; answers the owner status, headers and body',
    async () => {
      const owner = await fakeNode();
      let stopFake: (() => Promise<unknown>) | undefined;
      try {
        const a = await linkedSandbox(one, 'fw-bytes');
        stopFake = await aliveNode('fake-owner-bytes', owner.url);
        await own(a.id, 'fake-owner-bytes');
        await twoLearns();

        const json = '{"number":"5511999990000",  "text":"exact bytes ✓"}';
        const byInstanceKey = await two.api('POST', `message/sendText/${a.name}?x=1&y=two`, {
          body: json,
          key: a.apikey,
          headers: { 'x-request-id': 'trace-me-1', 'idempotency-key': 'k-1' },
        });
        expect(byInstanceKey.status).toBe(202);
        expect(byInstanceKey.body).toEqual({ answeredBy: 'the owner', n: 1 });
        expect(byInstanceKey.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(byInstanceKey.headers.get('content-disposition')).toBe('attachment; filename="answer.json"');
        expect(byInstanceKey.headers.get('retry-after')).toBe('7');
        expect(byInstanceKey.headers.get('x-request-id')).toBe('trace-me-1');
        const [first] = owner.seen;
        expect(first?.method).toBe('POST');
        expect(first?.url).toBe(`/messenger/message/sendText/${a.name}?x=1&y=two`);
        expect(first?.body.toString('utf8')).toBe(json);
        expect(first?.headers.apikey).toBe(a.apikey);
        expect(first?.headers['content-type']).toBe('application/json');
        expect(first?.headers['idempotency-key']).toBe('k-1');
        expect(first?.headers['x-request-id']).toBe('trace-me-1');
        expect(first?.headers['x-switchboard-forwarded-by']).toBe(two.services.nodes.incarnation);

        const form = new FormData();
        form.set('number', '5511999990000');
        form.set('mediatype', 'image');
        form.set('file', new Blob([Buffer.from([0xff, 0xd8, 0xff, 0x00, 0x01, 0x02])], { type: 'image/jpeg' }), 'x.jpg');
        const multipart = new Request('http://x', { method: 'POST', body: form });
        const multipartBytes = Buffer.from(await multipart.arrayBuffer());
        const upload = await fetch(`${two.url}/messenger/message/sendMedia/${a.name}`, {
          method: 'POST',
          headers: { apikey: two.globalKey, 'content-type': multipart.headers.get('content-type') ?? '' },
          body: multipartBytes,
        });
        expect(upload.status).toBe(202);
        expect(owner.seen[1]?.body.equals(multipartBytes)).toBe(true);
        expect(owner.seen[1]?.headers['content-type']).toBe(multipart.headers.get('content-type'));
        expect(owner.seen[1]?.headers.apikey).toBe(two.globalKey);

        // A wrong key is refused by node 2 itself: nothing reaches the owner.
        const wrong = await two.api('GET', `instance/connectionState/${a.name}`, { key: 'not-a-key' });
        expect(wrong.status).toBe(401);
        expect(owner.seen).toHaveLength(2);
        // Routes that need no live connection are served where they land.
        const settings = await two.api('GET', `settings/find/${a.name}`);
        expect(settings.status).toBe(200);
        expect(owner.seen).toHaveLength(2);
      } finally {
        await stopFake?.();
        await owner.close();
      }
    },
  );

  it.skipIf(!pg?.available)('carries exactly the routes that need the live connection; the others are served where they land', async () => {
    const owner = await fakeNode();
    let stopFake: (() => Promise<unknown>) | undefined;
    try {
      const a = await linkedSandbox(one, 'fw-routes');
      stopFake = await aliveNode('fake-owner-routes', owner.url);
      await own(a.id, 'fake-owner-routes');
      await twoLearns();
      const doc = (await two.api('GET', '/messenger/docs/json')).body as { paths: Record<string, Record<string, unknown>> };
      const carried: string[] = [];
      const servedHere: string[] = [];
      for (const [path, operations] of Object.entries(doc.paths)) {
        if (!path.includes('{instance}')) continue;
        for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
          const before = owner.seen.length;
          const res = await two.api(method, path.replace('{instance}', a.name), method === 'GET' ? {} : { body: {} });
          expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).not.toBe(500);
          (owner.seen.length > before ? carried : servedHere).push(`${method} ${path.replace('/messenger/', '')}`);
        }
      }
      // Settings, event sinks and the stored history need no connection (a new route must be put on one side or the other).
      expect(servedHere.sort()).toEqual(
        [
          'POST settings/set/{instance}',
          'GET settings/find/{instance}',
          'GET proxy/find/{instance}',
          'POST webhook/set/{instance}',
          'GET webhook/find/{instance}',
          'GET webhook/deliveries/{instance}',
          'POST webhook/redeliver/{instance}',
          'POST websocket/set/{instance}',
          'GET websocket/find/{instance}',
          'POST rabbitmq/set/{instance}',
          'GET rabbitmq/find/{instance}',
          'POST nats/set/{instance}',
          'GET nats/find/{instance}',
          'POST chat/findMessages/{instance}',
          'POST chat/findChats/{instance}',
          'POST chat/findContacts/{instance}',
          'POST chat/findStatusMessage/{instance}',
          'GET chat/findChatByRemoteJid/{instance}',
          'GET label/findLabels/{instance}',
        ].sort(),
      );
      // Everything else reaches the connection: the instance's connect, state, restart, logout and delete, every send,
      // presence, privacy, read marks, archive, profiles, groups, labelling, blocking, media download, edits, templates.
      expect(carried).toEqual(
        expect.arrayContaining([
          'GET instance/connect/{instance}',
          'GET instance/connectionState/{instance}',
          'DELETE instance/delete/{instance}',
          'POST message/sendText/{instance}',
          'POST message/sendMedia/{instance}',
          'POST chat/markMessageAsRead/{instance}',
          'POST chat/archiveChat/{instance}',
          'POST chat/getBase64FromMediaMessage/{instance}',
          'GET group/fetchAllGroups/{instance}',
          'POST proxy/set/{instance}',
          'GET template/find/{instance}',
          'POST sandbox/inject/{instance}',
        ]),
      );
    } finally {
      await stopFake?.();
      await owner.close();
    }
  });

  it.skipIf(!pg?.available)(
    'a dead owner: waits for a new one (bounded), then 503 with Retry-After; served as soon as the instance has a live owner',
    async () => {
      const owner = await fakeNode();
      let stopFake: (() => Promise<unknown>) | undefined;
      try {
        const a = await linkedSandbox(one, 'fw-dead');
        stopFake = await aliveNode('fake-owner-dead', owner.url);
        await own(a.id, 'fake-owner-dead');
        await twoLearns();
        const db = one.services.store.db;
        // Node 1 lets it go (the row names another owner), and then looks no more: nobody takes the instance over.
        await waitFor(() => one.services.lifecycle.connectorOf(a.id) === undefined, 10_000);
        await one.services.lifecycle.pauseOwnership();

        // Its heartbeat old: dead, although the owner row still names it.
        await db
          .updateTable('nodes')
          .set({ heartbeat_at: Date.now() - 60_000 })
          .where('incarnation', '=', 'fake-owner-dead')
          .execute();
        let started = Date.now();
        const refused = await two.api('GET', `instance/connectionState/${a.name}`);
        const waited = Date.now() - started;
        expect(refused.status).toBe(503);
        expect(refused.body).toEqual({
          status: 503,
          error: 'Service Unavailable',
          response: { message: [expect.stringMatching(/being taken over by another node; retry in \d+ seconds/)] },
        });
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(waited).toBeGreaterThanOrEqual(moveWaitMs - 100);
        expect(waited).toBeLessThan(moveWaitMs + 2000);
        expect(owner.seen).toHaveLength(0);

        // Stopped cleanly: the same.
        await db
          .updateTable('nodes')
          .set({ heartbeat_at: Date.now() + 3600_000, stopped_at: Date.now() })
          .where('incarnation', '=', 'fake-owner-dead')
          .execute();
        expect((await two.api('GET', `instance/connectionState/${a.name}`)).status).toBe(503);

        // Taken over while a request waits: the request goes to the new owner (node 1) and is answered.
        started = Date.now();
        const waiting = two.api('GET', `instance/connectionState/${a.name}`);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await one.services.lifecycle.resumeOwnership();
        const served = await waiting;
        expect(served.status, JSON.stringify(served.body)).toBe(200);
        expect(served.body.instance.instanceName).toBe(a.name);
        expect(Date.now() - started).toBeLessThan(moveWaitMs);
        expect(one.services.lifecycle.connectorOf(a.id)).toBeDefined();
        expect(owner.seen).toHaveLength(0);
      } finally {
        await stopFake?.();
        await owner.close();
      }
    },
  );

  it.skipIf(!pg?.available)('an owner listed alive that does not listen: 503 with Retry-After, not 500', async () => {
    const a = await linkedSandbox(one, 'fw-closed');
    const closedPort = await freePort();
    const stopFake = await aliveNode('fake-owner-closed', `http://127.0.0.1:${closedPort}`);
    try {
      await own(a.id, 'fake-owner-closed');
      await twoLearns();
      const started = Date.now();
      const res = await two.api('POST', `chat/sendPresence/${a.name}`, { body: { number: '5511999990000', presence: 'composing', delay: 0 } });
      expect(res.status).toBe(503);
      expect(res.body.response.message[0]).toMatch(/cannot be reached/);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await stopFake();
    }
    await backToOne(a.id);
  });

  it.skipIf(!pg?.available)('never forwards twice: a forwarded request reaching a node that is not the owner is a 503', async () => {
    const a = await linkedSandbox(one, 'fw-loop');
    await twoLearns();
    const headers = { 'x-switchboard-forwarded-by': 'some-other-node' };
    const res = await two.api('GET', `instance/connectionState/${a.name}`, { headers });
    expect(res.status).toBe(503);
    expect(res.body.response.message[0]).toMatch(/moving between nodes/);
    expect(res.headers.get('retry-after')).toBeTruthy();
    // The owner serves it as its own.
    const atOwner = await one.api('GET', `instance/connectionState/${a.name}`, { headers });
    expect(atOwner.status).toBe(200);
    expect(atOwner.body.instance.state).toBe('open');
  });
});

describe.each(targets)('one node on $name', (target) => {
  let t: TestApp;
  beforeAll(async () => {
    if (target.available) t = await startApp(target);
  });
  afterAll(async () => {
    await t?.close();
  });

  it.skipIf(!target.available)('serves live operations itself, as the owner of its instances', async () => {
    const a = await linkedSandbox(t, 'solo');
    expect((await t.api('GET', `instance/connectionState/${a.name}`)).body.instance.state).toBe('open');
    // Owned by this node, the only one.
    const row = await t.services.store.db.selectFrom('instance_owners').select('owner').where('instance_id', '=', a.id).executeTakeFirst();
    expect(row?.owner).toBe(t.services.nodes.incarnation);
    expect((await t.api('POST', `chat/sendPresence/${a.name}`, { body: { number: '5511999990000', presence: 'composing', delay: 0 } })).status).toBe(201);
    const logout = await t.api('DELETE', `instance/logout/${a.name}`);
    expect(logout.status, JSON.stringify(logout.body)).toBe(200);
  });
});
