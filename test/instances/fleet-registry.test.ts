// What every node of a fleet sees: instances, keys, settings and webhooks changed through one node are known to the
// others at once (store signals), also after the listening connection was lost (resync); an accepted send wakes the
// worker of the node whose connection sends it, without waiting for the worker's poll.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { linkedSandbox, startFleet, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { pgQuery } from '../support/postgres.js';
import { uniqueName, uniqueNumber } from '../support/unique.js';
import { waitFor } from '../support/wait.js';

const targets = await storeTargets();
const pg = targets.find((t) => t.name === 'postgres');

/** How long a change may take to reach the other nodes here (signals arrive in milliseconds; the machine is shared). */
const seenWithinMs = 5_000;

describe.skipIf(!pg?.available)('a fleet of two nodes on one PostgreSQL schema', () => {
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  let one: TestApp;
  let two: TestApp;
  let rx: Receiver;

  beforeAll(async () => {
    // The send workers' own poll is a minute: a send delivered sooner was woken.
    fleet = await startFleet(2, { SEND_WORKER_POLL_MS: '60000', OUTBOUND_DENY_PRIVATE: 'false' });
    [one, two] = fleet.nodes as [TestApp, TestApp];
    rx = await startReceiver();
  });
  afterAll(async () => {
    await fleet?.close();
    await rx?.close();
  });

  /** Whether `node` lists the instance (global key). */
  const lists = async (node: TestApp, name: string) => (await node.api('GET', `instance/fetchInstances?instanceName=${name}`)).status === 200;

  it('an instance created through one node is known to the other: listed, its key accepted, its settings and deletion seen', async () => {
    const name = uniqueName('fleet-seen');
    const created = await one.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const apikey = created.body.hash.apikey as string;

    await waitFor(() => lists(two, name), seenWithinMs, { what: `node 2 listing ${name}` });
    const byKey = await two.api('GET', 'instance/fetchInstances', { key: apikey });
    expect(byKey.status, JSON.stringify(byKey.body)).toBe(200);
    expect(byKey.body.map((entry: { instance: { instanceName: string } }) => entry.instance.instanceName)).toEqual([name]);
    expect((await two.api('GET', `settings/find/${name}`, { key: apikey })).status).toBe(200);

    const set = await two.api('POST', `settings/set/${name}`, { body: { rejectCall: true, msgCall: 'set through node 2' } });
    expect(set.status, JSON.stringify(set.body)).toBe(201);
    await waitFor(async () => (await one.api('GET', `settings/find/${name}`)).body?.msgCall === 'set through node 2', seenWithinMs, {
      what: 'node 1 seeing the settings set through node 2',
    });
    expect((await one.api('GET', `settings/find/${name}`)).body).toMatchObject({ rejectCall: true });

    const deleted = await one.api('DELETE', `instance/delete/${name}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    await waitFor(async () => (await two.api('GET', `instance/connectionState/${name}`)).status === 404, seenWithinMs, {
      what: 'node 2 answering 404 for the deleted instance',
    });
    expect((await two.api('GET', 'instance/fetchInstances', { key: apikey })).status).toBe(401);
  });

  it('reads back the instance changes of the other node, never its own (applied as they commit)', async () => {
    type ReadBack = { refreshMany(ids: string[]): Promise<string[]> };
    /** Records the ids `node`'s registry reads back, and reads them as before. */
    const recordReads = (node: TestApp, into: string[]) => {
      const registry = node.services.registry as unknown as ReadBack;
      const original = registry.refreshMany;
      return vi.spyOn(registry, 'refreshMany').mockImplementation(function (this: ReadBack, ids: string[]) {
        into.push(...ids);
        return original.call(this, ids);
      });
    };
    const readByOne: string[] = [];
    const readByTwo: string[] = [];
    const spyOne = recordReads(one, readByOne);
    const spyTwo = recordReads(two, readByTwo);
    try {
      const name = uniqueName('own-signals');
      const created = await one.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.instance.instanceId as string;
      await waitFor(() => lists(two, name), seenWithinMs, { what: `node 2 listing ${name}` });
      const set = await one.api('POST', `settings/set/${name}`, { body: { rejectCall: true, msgCall: 'set through node 1' } });
      expect(set.status, JSON.stringify(set.body)).toBe(201);
      await waitFor(async () => (await two.api('GET', `settings/find/${name}`)).body?.msgCall === 'set through node 1', seenWithinMs, {
        what: 'node 2 seeing the settings set through node 1',
      });
      const back = await two.api('POST', `settings/set/${name}`, { body: { rejectCall: false, msgCall: 'set through node 2' } });
      expect(back.status, JSON.stringify(back.body)).toBe(201);
      await waitFor(async () => (await one.api('GET', `settings/find/${name}`)).body?.msgCall === 'set through node 2', seenWithinMs, {
        what: 'node 1 seeing the settings set through node 2',
      });
      expect(readByTwo).toContain(id);
      expect(readByOne).toContain(id);
      // Node 1 read it back for node 2's change only: its creation and its own change were applied as they committed.
      expect(readByOne.filter((read) => read === id)).toHaveLength(1);
      expect(readByTwo.filter((read) => read === id).length).toBeGreaterThanOrEqual(1);
      expect(readByTwo.filter((read) => read === id).length).toBeLessThanOrEqual(2);
    } finally {
      spyOne.mockRestore();
      spyTwo.mockRestore();
    }
  });

  it('a webhook set through one node receives the events of a change made through the other', async () => {
    const name = uniqueName('fleet-hook');
    const created = await one.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const hook = await one.api('POST', `webhook/set/${name}`, { body: { webhook: { enabled: true, url: `${rx.url}/hook`, events: ['QRCODE_UPDATED'] } } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    await waitFor(() => lists(two, name), seenWithinMs);

    // Connecting through node 2 starts the instance's connector there (its only one): node 2 emits its QR code.
    const connect = await two.api('GET', `instance/connect/${name}`);
    expect(connect.status, JSON.stringify(connect.body)).toBe(200);
    await rx.waitFor((events) => events.some((e) => e.body?.event === 'qrcode.updated' && e.body?.instance === name), 10_000);
    await two.api('DELETE', `instance/delete/${name}`);
  });

  it('picks up changes whose signals it missed once its listening connection is back', async () => {
    const name = uniqueName('fleet-resync');
    const created = await one.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await waitFor(() => lists(two, name), seenWithinMs);

    // Changes no signal tells of (written past the service), as if their signals had been lost.
    await pgQuery(`update ${fleet.schema}.instances set msg_call = 'missed' where name = $1`, [name]);
    const late = uniqueName('fleet-late');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await two.api('GET', `settings/find/${name}`)).body.msgCall).not.toBe('missed');

    // Every listening connection of this schema is killed from the server side; changes go on meanwhile.
    const killed = await pgQuery<{ pid: number }>(
      "select pid from pg_stat_activity where query like 'listen %' and query like $1 and pg_terminate_backend(pid)",
      [`%${fleet.schema}.%`],
    );
    expect(killed.length).toBeGreaterThan(0);
    const createdLate = await one.api('POST', 'instance/create', { body: { instanceName: late, integration: 'SANDBOX' } });
    expect(createdLate.status, JSON.stringify(createdLate.body)).toBe(201);

    await waitFor(async () => (await two.api('GET', `settings/find/${name}`)).body?.msgCall === 'missed', 15_000, {
      what: 'node 2 reading back a change it missed',
    });
    await waitFor(() => lists(two, late), 15_000, { what: 'node 2 knowing an instance created while it was not listening' });
    const lateKey = await two.api('GET', 'instance/fetchInstances', { key: createdLate.body.hash.apikey });
    expect(lateKey.status).toBe(200);
  });

  it('a send accepted by one node is sent at once by the node whose connection it goes out on', async () => {
    // Both parties live on node 1 only (linked there; node 2 never connects them).
    const senderName = uniqueName('fleet-from');
    await linkedSandbox(one, senderName, uniqueNumber('4916'));
    const recipientNumber = uniqueNumber('4916');
    await linkedSandbox(one, uniqueName('fleet-to'), recipientNumber);
    await waitFor(async () => (await two.api('GET', `instance/connectionState/${senderName}`)).body?.instance?.state === 'open', seenWithinMs, {
      what: 'node 2 seeing the sender open',
    });
    const db = one.services.store.db;
    const statusOf = async (id: string) => (await db.selectFrom('messages').select('status').where('id', '=', id).executeTakeFirst())?.status;

    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const sent = await two.api('POST', `message/sendText/${senderName}`, { body: { number: recipientNumber, text: `through node 2, ${i}` } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      const id = await db.selectFrom('messages').select('id').where('key_id', '=', sent.body.key.id).executeTakeFirstOrThrow();
      await waitFor(async () => (await statusOf(id.id)) !== 'PENDING', 5_000, { what: 'the send leaving node 1' });
      // Far below the poll (a minute): node 1's worker was woken by node 2's signal.
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });

  it('a chat stored through one node is announced once, not again by the other node', async () => {
    const name = uniqueName('fleet-chats');
    await linkedSandbox(one, name, uniqueNumber('4917'));
    const hook = await one.api('POST', `webhook/set/${name}`, { body: { webhook: { enabled: true, url: `${rx.url}/chats`, events: ['CHATS_UPSERT'] } } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    await waitFor(async () => (await two.api('GET', `instance/connectionState/${name}`)).body?.instance?.state === 'open', seenWithinMs);
    const announced = (number: string) => rx.of('chats.upsert', name).filter((e) => JSON.stringify(e.body.data).includes(number)).length;

    // Node 2 knows the instance's chats from here on (its book is loaded by its first send).
    const first = uniqueNumber('4917');
    expect((await two.api('POST', `message/sendText/${name}`, { body: { number: first, text: 'first chat, through node 2' } })).status).toBe(201);
    await waitFor(() => announced(first) === 1, 10_000, { what: 'the first chat announced' });

    // A new chat stored through node 1, then written to through node 2: node 2 has heard of it.
    const second = uniqueNumber('4917');
    expect((await one.api('POST', `message/sendText/${name}`, { body: { number: second, text: 'new chat, through node 1' } })).status).toBe(201);
    await waitFor(() => announced(second) === 1, 10_000, { what: 'the second chat announced' });
    const again = await two.api('POST', `message/sendText/${name}`, { body: { number: second, text: 'same chat, through node 2' } });
    expect(again.status).toBe(201);
    const third = uniqueNumber('4917');
    // A later chat's announcement: whatever node 2 announced for the second chat was delivered before it.
    expect((await two.api('POST', `message/sendText/${name}`, { body: { number: third, text: 'another chat' } })).status).toBe(201);
    await waitFor(() => announced(third) === 1, 10_000, { what: 'the third chat announced' });
    expect(announced(second)).toBe(1);
  });
});
