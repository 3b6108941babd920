// The history store over HTTP on both stores: sandbox A and B exchange messages, then findMessages, findChats,
// findContacts, findStatusMessage and findChatByRemoteJid read them back; chats.upsert / contacts.upsert reach a real
// receiver; archiveChat and markChatUnread change the chat; the validation 400s; the DATABASE_SAVE_* switches off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';
import { expect400 } from '../support/answers.js';
import { uniqueName } from '../support/unique.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

async function sendText(t: TestApp, from: Party, to: string, text: string): Promise<string> {
  const res = await t.api('POST', `message/sendText/${from.name}`, { body: { number: to, text } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.key.id;
}

/** Waits until `instance` got the messages.upsert of each key id. */
async function received(rx: Receiver, instance: string, keyIds: string[]): Promise<void> {
  await rx.waitFor(() => keyIds.every((id) => rx.of('messages.upsert', instance).some((e) => e.body.data?.key?.id === id)), 10_000);
}

describe.each(targets)('history over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox pair (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    /** A's five texts to B, in the order sent, then B's two replies. */
    const fromA: string[] = [];
    const fromB: string[] = [];

    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'hist-a', 'Alice');
      b = await party(t, rx, 'hist-b', 'Bob');
      for (let i = 1; i <= 5; i++) fromA.push(await sendText(t, a, b.number, `A says ${i}`));
      await received(rx, b.name, fromA);
      for (let i = 1; i <= 2; i++) fromB.push(await sendText(t, b, a.number, `B says ${i}`));
      await received(rx, a.name, fromB);
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('findMessages pages one chat newest first: total, pages, currentPage, records in the stored shape', async () => {
      const first = await t.api('POST', `chat/findMessages/${a.name}`, { body: { where: { key: { remoteJid: b.number } }, page: 1, offset: 3 } });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.messages).toMatchObject({ total: 7, pages: 3, currentPage: 1 });
      const all = [...fromA, ...fromB];
      const newestFirst = [...all].reverse();
      expect(first.body.messages.records.map((r: Json) => r.key.id)).toEqual(newestFirst.slice(0, 3));
      const record = first.body.messages.records.find((r: Json) => r.key.id === fromB[1]);
      expect(record).toMatchObject({
        id: expect.any(String),
        key: { remoteJid: b.owner, fromMe: false, id: fromB[1] },
        pushName: 'Bob',
        messageType: 'conversation',
        message: { conversation: 'B says 2' },
        messageTimestamp: expect.any(Number),
        instanceId: expect.any(String),
        source: expect.any(String),
        contextInfo: null,
        MessageUpdate: [],
      });
      const last = await t.api('POST', `chat/findMessages/${a.name}`, { body: { where: { key: { remoteJid: b.owner } }, page: 3, offset: 3 } });
      expect(last.body.messages).toMatchObject({ total: 7, pages: 3, currentPage: 3 });
      expect(last.body.messages.records.map((r: Json) => r.key.id)).toEqual(newestFirst.slice(6));
      const defaults = await t.api('POST', `chat/findMessages/${a.name}`, { body: {} });
      expect(defaults.body.messages).toMatchObject({ total: 7, pages: 1, currentPage: 1 });
      expect(defaults.body.messages.records).toHaveLength(7);
    });

    it('findMessages filters: own messages, key id, stored id, type, times; fromMe false filters nothing', async () => {
      const find = async (where: Json) => (await t.api('POST', `chat/findMessages/${a.name}`, { body: { where } })).body.messages;
      expect((await find({ key: { fromMe: true } })).total).toBe(5);
      expect((await find({ key: { fromMe: false } })).total).toBe(7);
      const one = await find({ key: { id: fromA[2] } });
      expect(one.total).toBe(1);
      expect(one.records[0].message).toEqual({ conversation: 'A says 3' });
      expect((await find({ id: one.records[0].id })).records[0].key.id).toBe(fromA[2]);
      expect((await find({ messageType: 'conversation', key: { remoteJid: b.owner } })).total).toBe(7);
      expect((await find({ messageType: 'imageMessage' })).total).toBe(0);
      const now = Date.now();
      expect((await find({ messageTimestamp: { gte: new Date(now - 600_000).toISOString(), lte: now + 600_000 } })).total).toBe(7);
      expect((await find({ messageTimestamp: { gte: Math.floor(now / 1000) + 3600 } })).total).toBe(0);
      expect((await find({ key: { remoteJid: '4915000000000' } })).total).toBe(0);
    });

    it('MessageUpdate and findStatusMessage show the statuses a sent message went through, after delivery and read', async () => {
      const keyId = fromA[0];
      const read = await t.api('POST', `chat/markMessageAsRead/${b.name}`, { body: { readMessages: [{ remoteJid: a.owner, fromMe: false, id: keyId }] } });
      expect(read.status).toBe(201);
      await rx.waitFor(() => rx.of('messages.update', a.name).some((e) => e.body.data.keyId === keyId && e.body.data.status === 'READ'), 10_000);
      const found = await t.api('POST', `chat/findMessages/${a.name}`, { body: { where: { key: { id: keyId } } } });
      expect(found.body.messages.records[0].MessageUpdate).toEqual([{ status: 'SERVER_ACK' }, { status: 'DELIVERY_ACK' }, { status: 'READ' }]);

      const byId = await t.api('POST', `chat/findStatusMessage/${a.name}`, { body: { where: { id: keyId } } });
      expect(byId.status).toBe(200);
      expect(byId.body.map((row: Json) => row.status)).toEqual(['SERVER_ACK', 'DELIVERY_ACK', 'READ']);
      expect(byId.body[0]).toMatchObject({
        keyId,
        remoteJid: b.owner,
        fromMe: true,
        messageId: found.body.messages.records[0].id,
        instanceId: expect.any(String),
      });
      const byChat = await t.api('POST', `chat/findStatusMessage/${a.name}`, { body: { where: { remoteJid: b.number }, page: 1, offset: 2 } });
      expect(byChat.body).toHaveLength(2);
      const everything = await t.api('POST', `chat/findStatusMessage/${a.name}`, { body: { where: { remoteJid: b.owner }, offset: 100 } });
      // Five sends, each SERVER_ACK and DELIVERY_ACK, one READ.
      expect(everything.body).toHaveLength(11);
    });

    it('findChats: one chat per address with its last message, unread count, contact; markMessageAsRead resets the count', async () => {
      const before = await t.api('POST', `chat/findChats/${b.name}`, { body: {} });
      expect(before.status, JSON.stringify(before.body)).toBe(200);
      expect(before.body).toHaveLength(1);
      const chat = before.body[0];
      expect(chat).toMatchObject({
        id: expect.any(String),
        remoteJid: a.owner,
        pushName: 'Alice',
        updatedAt: expect.any(String),
        isSaved: true,
        archived: false,
        markedUnread: false,
        lastMessage: { key: { id: fromB[1], fromMe: true, remoteJid: a.owner }, message: { conversation: 'B says 2' } },
      });
      // Five received, one of them read above.
      expect(chat.unreadCount).toBe(0);
      const read = await t.api('POST', `chat/markMessageAsRead/${b.name}`, { body: { readMessages: [{ remoteJid: a.owner, id: fromA[4] }] } });
      expect(read.status).toBe(201);
      const after = await t.api('POST', `chat/findChats/${b.name}`, { body: { where: { remoteJid: a.number } } });
      expect(after.body[0].unreadCount).toBe(0);

      // A has two unread from B; reading them resets the count and announces it (chats.update).
      const onA = await t.api('POST', `chat/findChats/${a.name}`, { body: { where: { remoteJid: b.owner } } });
      expect(onA.body[0]).toMatchObject({ remoteJid: b.owner, unreadCount: 2, pushName: 'Bob' });
      const readOnA = await t.api('POST', `chat/markMessageAsRead/${a.name}`, { body: { readMessages: [{ remoteJid: b.owner, id: fromB[1] }] } });
      expect(readOnA.status).toBe(201);
      await rx.waitFor(() => rx.of('chats.update', a.name).some((e) => e.body.data[0]?.remoteJid === b.owner && e.body.data[0]?.unreadMessages === 0), 10_000);
      const readAgain = await t.api('POST', `chat/findChats/${a.name}`, { body: { where: { remoteJid: b.owner } } });
      expect(readAgain.body[0].unreadCount).toBe(0);
    });

    it('findChats honours take/skip and, without take, page/offset (the n8n node)', async () => {
      const c = await party(t, rx, 'hist-c', 'Carol');
      await received(rx, b.name, [await sendText(t, c, b.number, 'C says hi')]);
      const all = await t.api('POST', `chat/findChats/${b.name}`, { body: {} });
      expect(all.body.map((row: Json) => row.remoteJid)).toEqual([c.owner, a.owner]);
      const take = await t.api('POST', `chat/findChats/${b.name}`, { body: { take: 1, skip: 1 } });
      expect(take.body.map((row: Json) => row.remoteJid)).toEqual([a.owner]);
      const paged = await t.api('POST', `chat/findChats/${b.name}`, { body: { page: 2, offset: 1 } });
      expect(paged.body.map((row: Json) => row.remoteJid)).toEqual([a.owner]);
      const unread = all.body.find((row: Json) => row.remoteJid === c.owner);
      expect(unread.unreadCount).toBe(1);
    });

    it('findContacts: the people written with, by remoteJid or by id (n8n), paged by offset', async () => {
      const contacts = await t.api('POST', `chat/findContacts/${b.name}`, { body: {} });
      expect(contacts.status).toBe(200);
      const alice = contacts.body.find((row: Json) => row.remoteJid === a.owner);
      expect(alice).toMatchObject({
        id: expect.any(String),
        remoteJid: a.owner,
        pushName: 'Alice',
        profilePicUrl: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        instanceId: expect.any(String),
        isGroup: false,
        isSaved: true,
        type: 'contact',
      });
      const byJid = await t.api('POST', `chat/findContacts/${b.name}`, { body: { where: { remoteJid: a.number } } });
      expect(byJid.body.map((row: Json) => row.remoteJid)).toEqual([a.owner]);
      const byId = await t.api('POST', `chat/findContacts/${b.name}`, { body: { where: { id: a.owner } } });
      expect(byId.body.map((row: Json) => row.remoteJid)).toEqual([a.owner]);
      const page = await t.api('POST', `chat/findContacts/${b.name}`, { body: { page: 1, offset: 1 } });
      expect(page.body).toHaveLength(1);
      // A sent to B: B's contact on A, unnamed until B wrote back with its push name.
      const onA = await t.api('POST', `chat/findContacts/${a.name}`, { body: { where: { remoteJid: b.owner } } });
      expect(onA.body[0]).toMatchObject({ remoteJid: b.owner, pushName: 'Bob' });
    });

    it('findChatByRemoteJid: the chat row, null for an unknown chat, 400 without remoteJid', async () => {
      const found = await t.api('GET', `chat/findChatByRemoteJid/${b.name}?remoteJid=${a.number}`);
      expect(found.status).toBe(200);
      expect(found.body).toMatchObject({
        id: expect.any(String),
        remoteJid: a.owner,
        name: 'Alice',
        labels: [],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        instanceId: expect.any(String),
        unreadMessages: expect.any(Number),
        archived: false,
      });
      const none = await t.api('GET', `chat/findChatByRemoteJid/${b.name}?remoteJid=4915000000001@s.whatsapp.net`);
      expect(none.status).toBe(200);
      expect(none.body).toBeNull();
      expect400(await t.api('GET', `chat/findChatByRemoteJid/${b.name}`), 'remoteJid is a required query parameter');
    });

    it('chats.upsert and contacts.upsert reach the receiver once per new chat and contact, as arrays', async () => {
      await rx.waitFor(() => rx.of('chats.upsert', b.name).length > 0 && rx.of('contacts.upsert', b.name).length > 0, 10_000);
      const chatsOnB = rx.of('chats.upsert', b.name).filter((e) => e.body.data[0].remoteJid === a.owner);
      expect(chatsOnB).toHaveLength(1);
      expect(chatsOnB[0].body.data).toEqual([{ remoteJid: a.owner, instanceId: expect.any(String), name: 'Alice', unreadMessages: 1, archived: false }]);
      const contactsOnB = rx.of('contacts.upsert', b.name).filter((e) => e.body.data[0].remoteJid === a.owner);
      expect(contactsOnB).toHaveLength(1);
      expect(contactsOnB[0].body.data).toEqual([{ remoteJid: a.owner, pushName: 'Alice', profilePicUrl: null, instanceId: expect.any(String) }]);
      // A wrote first: its chat with B started with its own send (no name), B's push name came with the reply.
      const chatsOnA = rx.of('chats.upsert', a.name).filter((e) => e.body.data[0].remoteJid === b.owner);
      expect(chatsOnA).toHaveLength(1);
      expect(chatsOnA[0].body.data[0]).toMatchObject({ name: null, unreadMessages: 0 });
      expect(rx.of('contacts.upsert', a.name).filter((e) => e.body.data[0].remoteJid === b.owner)).toHaveLength(1);
      const named = rx.of('contacts.update', a.name).filter((e) => e.body.data[0].remoteJid === b.owner);
      expect(named.map((e) => e.body.data[0].pushName)).toEqual(['Bob']);
    });

    it('archiveChat answers the real state (archive and unarchive), by chat alone or lastMessage; findChats shows it', async () => {
      const archived = await t.api('POST', `chat/archiveChat/${b.name}`, { body: { archive: true, chat: a.number } });
      expect(archived.status, JSON.stringify(archived.body)).toBe(201);
      expect(archived.body).toEqual({ chatId: a.owner, archived: true });
      expect((await t.api('POST', `chat/findChats/${b.name}`, { body: { where: { remoteJid: a.owner } } })).body[0].archived).toBe(true);
      await rx.waitFor(() => rx.of('chats.update', b.name).some((e) => e.body.data[0]?.archived === true), 10_000);

      const unarchived = await t.api('POST', `chat/archiveChat/${b.name}`, {
        body: { archive: false, lastMessage: { key: { id: fromA[4], remoteJid: a.owner, fromMe: false } }, chat: 'ignored when lastMessage is given' },
      });
      expect(unarchived.status, JSON.stringify(unarchived.body)).toBe(201);
      expect(unarchived.body).toEqual({ chatId: a.owner, archived: false });
      const row = await t.api('GET', `chat/findChatByRemoteJid/${b.name}?remoteJid=${a.owner}`);
      expect(row.body.archived).toBe(false);
    });

    it('markChatUnread answers 201 {chatId, markedChatUnread: true}; the chat shows it until read', async () => {
      const res = await t.api('POST', `chat/markChatUnread/${b.name}`, {
        body: { lastMessage: { key: { id: fromA[4], remoteJid: a.number, fromMe: false }, messageTimestamp: Date.now() } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({ chatId: a.owner, markedChatUnread: true });
      expect((await t.api('GET', `chat/findChatByRemoteJid/${b.name}?remoteJid=${a.owner}`)).body.markedUnread).toBe(true);
      await t.api('POST', `chat/markMessageAsRead/${b.name}`, { body: { readMessages: [{ remoteJid: a.owner, id: fromA[4] }] } });
      expect((await t.api('GET', `chat/findChatByRemoteJid/${b.name}?remoteJid=${a.owner}`)).body.markedUnread).toBe(false);
      // A chat with no message yet gets its row from the mark.
      const fresh = await t.api('POST', `chat/markChatUnread/${b.name}`, { body: { chat: '4915000000002' } });
      expect(fresh.body).toEqual({ chatId: '4915000000002@s.whatsapp.net', markedChatUnread: true });
      expect((await t.api('GET', `chat/findChatByRemoteJid/${b.name}?remoteJid=4915000000002`)).body).toMatchObject({ markedUnread: true, unreadMessages: 0 });
    });

    it('answers the validation 400s naming the field (JSON is not coerced)', async () => {
      expect400(await t.api('POST', `chat/findMessages/${a.name}`, { body: { page: '1' } }), /page/);
      expect400(await t.api('POST', `chat/findMessages/${a.name}`, { body: { offset: 0 } }), /offset/);
      expect400(await t.api('POST', `chat/findMessages/${a.name}`, { body: { where: { key: { fromMe: 'yes' } } } }), /fromMe/);
      expect400(
        await t.api('POST', `chat/findMessages/${a.name}`, { body: { where: { messageTimestamp: { gte: 'yesterday' } } } }),
        /where\.messageTimestamp\.gte "yesterday" is not a date/,
      );
      expect400(await t.api('POST', `chat/findMessages/${a.name}`, { body: { where: { key: { remoteJid: 'abc' } } } }), /where\.key\.remoteJid/);
      expect400(await t.api('POST', `chat/findChats/${a.name}`, { body: { take: 0 } }), /take/);
      expect400(await t.api('POST', `chat/findContacts/${a.name}`, { body: { page: 2 } }), 'offset (the page size) is required with page');
      expect400(await t.api('POST', `chat/findStatusMessage/${a.name}`, { body: { where: { id: 5 } } }), /id/);
      expect400(await t.api('POST', `chat/archiveChat/${a.name}`, { body: { chat: b.number } }), /archive/);
      expect400(
        await t.api('POST', `chat/archiveChat/${a.name}`, { body: { archive: true } }),
        'chat is required (the chat address or number), or lastMessage with its key',
      );
      expect400(await t.api('POST', `chat/archiveChat/${a.name}`, { body: { archive: 'true', chat: b.number } }), /archive/);
      expect400(
        await t.api('POST', `chat/markChatUnread/${a.name}`, {
          body: { lastMessage: { key: { id: 'X', remoteJid: '120363000000000001@g.us', fromMe: false } } },
        }),
        /lastMessage\.key\.participant is required/,
      );
    });

    it('answers "Method not available" for archiveChat and markChatUnread on an EVOLUTION instance; its finds answer empty', async () => {
      const name = uniqueName('hist-evo');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'EVOLUTION' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect400(await t.api('POST', `chat/archiveChat/${name}`, { body: { archive: true, chat: b.number } }), /Method not available on Evolution Channel/);
      expect400(await t.api('POST', `chat/markChatUnread/${name}`, { body: { chat: b.number } }), /Method not available on Evolution Channel/);
      expect((await t.api('POST', `chat/findChats/${name}`, { body: {} })).body).toEqual([]);
      expect((await t.api('POST', `chat/findMessages/${name}`, { body: {} })).body).toEqual({ messages: { total: 0, pages: 0, currentPage: 1, records: [] } });
    });
  });
});

describe.each(targets)('history switches off on $name', (target) => {
  describe.skipIf(!target.available)(`switches off (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    beforeAll(async () => {
      t = await startApp(target, {
        DATABASE_SAVE_DATA_NEW_MESSAGE: 'false',
        DATABASE_SAVE_MESSAGE_UPDATE: 'false',
        DATABASE_SAVE_DATA_CONTACTS: 'false',
        DATABASE_SAVE_DATA_CHATS: 'false',
      });
      rx = await startReceiver();
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('keeps sends (without status history) but no received messages, chats or contacts; events still go out', async () => {
      const a = await party(t, rx, 'off-a', 'Alice');
      const b = await party(t, rx, 'off-b', 'Bob');
      const keyId = await sendText(t, a, b.number, 'not kept on B');
      await received(rx, b.name, [keyId]);
      await rx.waitFor(() => rx.of('messages.update', a.name).some((e) => e.body.data.keyId === keyId && e.body.data.status === 'DELIVERY_ACK'), 10_000);
      const onB = await t.api('POST', `chat/findMessages/${b.name}`, { body: {} });
      expect(onB.body.messages.total).toBe(0);
      const onA = await t.api('POST', `chat/findMessages/${a.name}`, { body: {} });
      expect(onA.body.messages.total).toBe(1);
      expect(onA.body.messages.records[0].MessageUpdate).toEqual([]);
      expect((await t.api('POST', `chat/findChats/${b.name}`, { body: {} })).body).toEqual([]);
      expect((await t.api('POST', `chat/findContacts/${b.name}`, { body: {} })).body).toEqual([]);
      expect(rx.of('chats.upsert')).toHaveLength(0);
      expect(rx.of('contacts.upsert')).toHaveLength(0);
    });
  });
});
