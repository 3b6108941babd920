// The sandbox across two nodes of a fleet (PostgreSQL): instance A live on node 1 and B live on node 2 message each
// other as if on one node — messages, receipts, reactions, edits, deletions, presence, groups, order under a burst,
// and a message to an instance live on no node arriving once its connector starts.
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, startReceiver, storeTargets, type Receiver, type TestApp } from '../../support/harness.js';
import { sandboxParty, type Party } from '../../support/sandbox-party.js';
import { uniqueName, uniqueNumber } from '../../support/unique.js';
import { waitFor } from '../../support/wait.js';

const postgres = (await storeTargets()).find((target) => target.name === 'postgres');

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

describe.skipIf(!postgres?.available)('the sandbox across two nodes (postgres)', () => {
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  let one: TestApp;
  let two: TestApp;
  let rx: Receiver;
  let a: Party;
  let b: Party;

  const upserts = (party: Party, keyId?: string) => rx.of('messages.upsert', party.name).filter((e) => keyId === undefined || e.body.data?.key?.id === keyId);
  const statuses = (party: Party, keyId: string) =>
    rx
      .of('messages.update', party.name)
      .filter((e) => e.body.data?.keyId === keyId)
      .map((e) => e.body.data.status as string);
  const send = async (node: TestApp, from: Party, to: string, text: string): Promise<string> => {
    const res = await node.api('POST', `message/sendText/${from.name}`, { body: { number: to, text } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.key.id;
  };
  const idOf = async (node: TestApp, party: Party) =>
    (await node.services.store.db.selectFrom('instances').select('id').where('name', '=', party.name).executeTakeFirstOrThrow()).id;
  /** Whose connector of the instance is live (open) on this node. */
  const openOn = async (node: TestApp, party: Party) => node.services.lifecycle.connectorOf(await idOf(node, party))?.state() === 'open';

  beforeAll(async () => {
    fleet = await startFleet(2, { SEND_RETRY_BASE_MS: '100', NODE_HEARTBEAT_INTERVAL_MS: '200' });
    [one, two] = fleet.nodes;
    rx = await startReceiver();
    // The node that creates and links an instance starts its connector; the other has none (instance ownership will
    // place connectors once it lands; until then the test places them so).
    a = await sandboxParty(one, rx, 'fleet-a', 'Alice');
    b = await sandboxParty(two, rx, 'fleet-b', 'Bob');
    // Until the instance registry is synchronised across nodes, a node learns instances created elsewhere at start:
    // each node reads the instances (and their webhooks) again.
    for (const node of [one, two]) {
      await node.services.registry.load();
      await node.services.sinks.load();
    }
    expect(await openOn(one, a)).toBe(true);
    expect(await openOn(two, b)).toBe(true);
    expect(one.services.lifecycle.connectorOf(await idOf(one, b))).toBeUndefined();
    expect(two.services.lifecycle.connectorOf(await idOf(two, a))).toBeUndefined();
  }, 60_000);
  afterAll(async () => {
    await fleet?.close();
    await rx?.close();
  });

  it('A on node 1 sends to B on node 2: B gets it once, A gets DELIVERY_ACK, then READ when B reads; B replies', async () => {
    const keyId = await send(one, a, b.number, 'hello across nodes');
    await rx.waitFor(() => upserts(b, keyId).length > 0, 10_000);
    const upsert = upserts(b, keyId)[0].body;
    expect(upsert.data.key).toMatchObject({ remoteJid: a.owner, fromMe: false, id: keyId });
    expect(upsert.data.message.conversation).toBe('hello across nodes');
    expect(upsert.data.pushName).toBe('Alice');
    await rx.waitFor(() => statuses(a, keyId).includes('DELIVERY_ACK'), 10_000);

    const read = await two.api('POST', `chat/markMessageAsRead/${b.name}`, { body: { readMessages: [{ remoteJid: a.owner, fromMe: false, id: keyId }] } });
    expect(read.status, JSON.stringify(read.body)).toBe(201);
    await rx.waitFor(() => statuses(a, keyId).includes('READ'), 10_000);
    expect(statuses(a, keyId)).toEqual(['SERVER_ACK', 'DELIVERY_ACK', 'READ']);
    expect(upserts(b, keyId)).toHaveLength(1);

    const reply = await send(two, b, a.number, 'hello back');
    await rx.waitFor(() => upserts(a, reply).length > 0 && statuses(b, reply).includes('DELIVERY_ACK'), 10_000);
    expect(upserts(a, reply)[0].body.data.key).toMatchObject({ remoteJid: b.owner, fromMe: false });
    expect(upserts(a, reply)).toHaveLength(1);
    // Nothing is left waiting in the store.
    expect(await one.services.store.db.selectFrom('sandbox_mail').selectAll().execute()).toEqual([]);
  });

  it('a reaction, an edit and a deletion for everyone reach the other node', async () => {
    const keyId = await send(two, b, a.number, 'react, edit? no: react');
    await rx.waitFor(() => upserts(a, keyId).length > 0, 10_000);
    const reacted = await one.api('POST', `message/sendReaction/${a.name}`, {
      body: { key: { remoteJid: b.owner, fromMe: false, id: keyId }, reaction: '👍' },
    });
    expect(reacted.status, JSON.stringify(reacted.body)).toBe(201);
    await rx.waitFor(() => upserts(b, reacted.body.key.id).length > 0, 10_000);
    // B sees the reaction's key from its side: its own message in the chat with A.
    expect(upserts(b, reacted.body.key.id)[0].body.data.message.reactionMessage).toMatchObject({
      text: '👍',
      key: { remoteJid: a.owner, fromMe: true, id: keyId },
    });

    const own = await send(one, a, b.number, 'helo');
    await rx.waitFor(() => upserts(b, own).length > 0, 10_000);
    const edited = await one.api('POST', `chat/updateMessage/${a.name}`, {
      body: { number: b.number, text: 'hello', key: { id: own, remoteJid: b.owner, fromMe: true } },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    await rx.waitFor(() => rx.of('messages.edited', b.name).some((e) => JSON.stringify(e.body.data).includes(own)), 10_000);

    const deleted = await one.api('DELETE', `chat/deleteMessageForEveryone/${a.name}`, { body: { id: own, remoteJid: b.owner, fromMe: true } });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(201);
    await rx.waitFor(() => rx.of('messages.delete', b.name).some((e) => e.body.data?.id === own), 10_000);
    const theirs: Json = rx.of('messages.delete', b.name).find((e) => e.body.data.id === own)?.body.data;
    expect(theirs).toMatchObject({ remoteJid: a.owner, fromMe: false, id: own, status: 'DELETED' });
  });

  it('media A uploads on node 1 is served by node 2, and B on node 2 downloads it (each node has its own DATA_DIR)', async () => {
    const png = await sharp({ create: { width: 32, height: 24, channels: 3, background: '#c00' } })
      .png()
      .toBuffer();
    const res = await one.api('POST', `message/sendMedia/${a.name}`, {
      body: { number: b.number, mediatype: 'image', media: `data:image/png;base64,${png.toString('base64')}` },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const keyId: string = res.body.key.id;
    await rx.waitFor(() => upserts(b, keyId).length > 0, 10_000);
    const image: Json = upserts(b, keyId)[0].body.data.message.imageMessage;
    const served = await fetch(`${two.url}${new URL(image.url).pathname}`);
    expect(served.status).toBe(200);
    const encrypted = Buffer.from(await served.arrayBuffer());
    expect(createHash('sha256').update(encrypted).digest('base64')).toBe(image.fileEncSha256);
    const downloaded = await two.api('POST', `chat/getBase64FromMediaMessage/${b.name}`, { body: { message: { key: { id: keyId } } } });
    expect(downloaded.status, JSON.stringify(downloaded.body)).toBe(201);
    expect(Buffer.from(downloaded.body.base64, 'base64').equals(png)).toBe(true);
    expect(one.dataDir).not.toBe(two.dataDir);
  });

  it('presence shown on node 1 reaches B on node 2', async () => {
    const res = await one.api('POST', `chat/sendPresence/${a.name}`, { body: { number: b.number, presence: 'composing', delay: 0 } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await rx.waitFor(() => rx.of('presence.update', b.name).some((e) => e.body.data?.presences?.[a.owner]?.lastKnownPresence === 'composing'), 10_000);
  });

  it('a group of A (owner, node 1) and B (node 2): group events and messages fan out both ways with the sender as participant', async () => {
    const created = await one.api('POST', `group/create/${a.name}`, { body: { subject: 'Across', participants: [b.number] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const gid: string = created.body.id;
    await rx.waitFor(() => rx.of('groups.upsert', b.name).some((e) => e.body.data?.[0]?.id === gid), 10_000);

    const fromA = await send(one, a, gid, 'to the group from A');
    await rx.waitFor(() => upserts(b, fromA).length > 0 && statuses(a, fromA).includes('DELIVERY_ACK'), 10_000);
    expect(upserts(b, fromA)[0].body.data.key).toMatchObject({ remoteJid: gid, fromMe: false, participant: a.owner });
    expect(upserts(b, fromA)).toHaveLength(1);

    // Node 2 learns the group node 1 created (its groups are read again when another node changed them).
    const fromB = await send(two, b, gid, 'to the group from B');
    await rx.waitFor(() => upserts(a, fromB).length > 0, 10_000);
    expect(upserts(a, fromB)[0].body.data.key).toMatchObject({ remoteJid: gid, fromMe: false, participant: b.owner });

    const renamed = await two.api('POST', `group/updateGroupSubject/${b.name}?groupJid=${gid}`, { body: { subject: 'Renamed' } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(201);
    await rx.waitFor(() => rx.of('groups.update', a.name).some((e) => e.body.data?.[0]?.subject === 'Renamed'), 10_000);
  });

  it('a block set on node 2 stops A on node 1; unblocking lets the next message through', async () => {
    const blocked = await two.api('POST', `chat/updateBlockStatus/${b.name}`, { body: { number: a.number, status: 'block' } });
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(201);
    const stopped = await send(one, a, b.number, 'you blocked me');
    await rx.waitFor(() => statuses(a, stopped).includes('SERVER_ACK'), 10_000);
    const unblocked = await two.api('POST', `chat/updateBlockStatus/${b.name}`, { body: { number: a.number, status: 'unblock' } });
    expect(unblocked.status, JSON.stringify(unblocked.body)).toBe(201);
    const through = await send(one, a, b.number, 'unblocked');
    await rx.waitFor(() => upserts(b, through).length > 0, 10_000);
    expect(upserts(b, stopped)).toEqual([]);
    expect(statuses(a, stopped)).toEqual(['SERVER_ACK']);
  });

  it('keeps the order of each chat under a burst of 50 messages each way', async () => {
    const burst = async (node: TestApp, from: Party, to: Party) => {
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) ids.push(await send(node, from, to.number, `burst ${i}`));
      return ids;
    };
    const [toB, toA] = await Promise.all([burst(one, a, b), burst(two, b, a)]);
    const arrived = (party: Party, ids: string[]) => {
      const wanted = new Set(ids);
      return upserts(party)
        .map((e) => e.body.data.key.id as string)
        .filter((id) => wanted.has(id));
    };
    await rx.waitFor(() => arrived(b, toB).length >= 50 && arrived(a, toA).length >= 50, 30_000);
    expect(arrived(b, toB)).toEqual(toB);
    expect(arrived(a, toA)).toEqual(toA);
  }, 60_000);

  it('a QR code shown by an instance on node 2 is scanned through node 1: node 2 links it, and it is reachable', async () => {
    const name = uniqueName('fleet-c');
    const number = uniqueNumber('4915');
    const created = await two.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX', qrcode: true } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // Until the instance registry is synchronised across nodes, node 1 learns the new instance by reading it again.
    await one.services.registry.load();
    const scan = await one.api('POST', 'sandbox/scan', { body: { code: created.body.qrcode.code, number, profileName: 'Carol' } });
    expect(scan.status, JSON.stringify(scan.body)).toBe(200);
    expect(scan.body).toEqual({ instance: { instanceName: name, status: 'open', owner: `${number}@s.whatsapp.net` } });
    const c: Party = { name, number, owner: scan.body.instance.owner };
    expect(await openOn(two, c)).toBe(true);
    expect(one.services.lifecycle.connectorOf(await idOf(one, c))).toBeUndefined();

    const hook = await two.api('POST', `webhook/set/${name}`, { body: { webhook: { enabled: true, url: rx.url, events: [] } } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    await one.services.registry.load();
    const keyId = await send(one, a, number, 'hello Carol');
    await rx.waitFor(() => upserts(c, keyId).length > 0, 10_000);

    // The same code again (now spent), and a code nobody shows: the 400 of one node.
    for (const code of [created.body.qrcode.code, 'sbx_nobody_shows_this_code']) {
      const again = await one.api('POST', 'sandbox/scan', { body: { code, number: uniqueNumber('4915') } });
      expect(again.status, JSON.stringify(again.body)).toBe(400);
      expect(again.body.response.message.join(' ')).toMatch(/code is unknown or expired/);
    }
  });

  it('a message to an instance live on no node is retried, and arrives once its connector starts', async () => {
    const bId = await idOf(two, b);
    const connector = two.services.lifecycle.connectorOf(bId);
    expect(connector).toBeDefined();
    await connector?.stop();
    await waitFor(async () => (await one.services.store.db.selectFrom('sandbox_live').selectAll().where('instance_id', '=', bId).execute()).length === 0, 5000);

    const keyId = await send(one, a, b.number, 'while you were away');
    // As on one node: the send is not acknowledged into the void; it waits and is retried.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(upserts(b, keyId)).toEqual([]);
    expect(statuses(a, keyId)).toEqual([]);

    await connector?.start();
    await rx.waitFor(() => upserts(b, keyId).length > 0 && statuses(a, keyId).includes('DELIVERY_ACK'), 15_000);
    expect(upserts(b, keyId)).toHaveLength(1);
  }, 30_000);

  it('deleting an instance removes its live row and the letters waiting for it', async () => {
    const d = await sandboxParty(two, rx, 'fleet-d');
    const dId = await idOf(two, d);
    const db = one.services.store.db;
    const live = () => db.selectFrom('sandbox_live').selectAll().where('instance_id', '=', dId).execute();
    expect(await live()).toHaveLength(1);
    // A letter left for it that no node took yet.
    await db.insertInto('sandbox_mail').values({ instance_id: dId, kind: 'event', payload: '{"kind":"event"}', created_at: Date.now() }).execute();
    const removed = await two.api('DELETE', `instance/delete/${d.name}`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(await live()).toEqual([]);
    expect(await db.selectFrom('sandbox_mail').selectAll().where('instance_id', '=', dId).execute()).toEqual([]);
  });
});
