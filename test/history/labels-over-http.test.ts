// Labels over HTTP on both stores: a sandbox account's labels (findLabels), labelling chats (handleLabel) with
// labels.association at a real receiver, creating / editing / deleting labels with labels.edit, the 400s and 404, and
// "Method not available" on the kinds without labels.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';
import { expect400 } from '../support/answers.js';
import { uniqueName, uniqueNumber } from '../support/unique.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

const defaultLabels = [
  { color: '1', name: 'New customer', id: '1', predefinedId: '1' },
  { color: '2', name: 'New order', id: '2', predefinedId: '2' },
  { color: '3', name: 'Pending payment', id: '3', predefinedId: '3' },
  { color: '4', name: 'Paid', id: '4', predefinedId: '4' },
  { color: '5', name: 'Order complete', id: '5', predefinedId: '5' },
];

describe.each(targets)('labels over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox accounts (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    const chatLabels = async (instance: string, remoteJid: string): Promise<string[]> =>
      (await t.api('GET', `chat/findChatByRemoteJid/${instance}?remoteJid=${encodeURIComponent(remoteJid)}`)).body?.labels;
    const events = (name: string, instance: string) => rx.of(name, instance).map((e) => e.body.data);

    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'lab-a', 'Alice');
      b = await party(t, rx, 'lab-b', 'Bob');
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it("findLabels answers a new account's labels: WhatsApp Business's five defaults, announced by no event", async () => {
      const res = await t.api('GET', `label/findLabels/${a.name}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual(defaultLabels);
      expect(events('labels.edit', a.name)).toEqual([]);
    });

    it('handleLabel adds a label to a chat and removes it: 200, the chat keeps it, labels.association once per change', async () => {
      const added = await t.api('POST', `label/handleLabel/${a.name}`, { body: { number: b.number, labelId: '4', action: 'add' } });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      expect(added.body).toEqual({ numberJid: b.owner, labelId: '4', add: true });
      await rx.waitFor(() => events('labels.association', a.name).length === 1);
      expect(events('labels.association', a.name)).toEqual([{ instance: a.name, type: 'add', chatId: b.owner, labelId: '4' }]);
      expect(await chatLabels(a.name, b.owner)).toEqual(['4']);

      // Adding it again changes nothing and announces nothing; a second label joins the first.
      expect((await t.api('POST', `label/handleLabel/${a.name}`, { body: { number: b.owner, labelId: '4', action: 'add' } })).status).toBe(200);
      expect((await t.api('POST', `label/handleLabel/${a.name}`, { body: { number: b.number, labelId: '1', action: 'add' } })).status).toBe(200);
      const removed = await t.api('POST', `label/handleLabel/${a.name}`, { body: { number: b.number, labelId: '4', action: 'remove' } });
      expect(removed.status, JSON.stringify(removed.body)).toBe(200);
      expect(removed.body).toEqual({ numberJid: b.owner, labelId: '4', remove: true });
      await rx.waitFor(() => events('labels.association', a.name).length === 3);
      expect(events('labels.association', a.name)).toEqual([
        { instance: a.name, type: 'add', chatId: b.owner, labelId: '4' },
        { instance: a.name, type: 'add', chatId: b.owner, labelId: '1' },
        { instance: a.name, type: 'remove', chatId: b.owner, labelId: '4' },
      ]);
      expect(await chatLabels(a.name, b.owner)).toEqual(['1']);
      // B's own chats are its own.
      expect(events('labels.association', b.name)).toEqual([]);
    });

    it('handleLabel labels the chat of an outside number the instance has a chat with; a number not on WhatsApp is a 404', async () => {
      const outside = uniqueNumber('4916');
      const stranger = await t.api('POST', `label/handleLabel/${a.name}`, { body: { number: outside, labelId: '2', action: 'add' } });
      expect(stranger.status, JSON.stringify(stranger.body)).toBe(404);
      expect(stranger.body).toEqual({ status: 404, error: 'Not Found', response: { message: ['Number is not on WhatsApp'] } });
      expect((await t.api('POST', `sandbox/inject/${a.name}`, { body: { from: outside, text: 'hello' } })).status).toBe(201);
      const labelled = await t.api('POST', `label/handleLabel/${a.name}`, { body: { number: outside, labelId: '2', action: 'add' } });
      expect(labelled.status, JSON.stringify(labelled.body)).toBe(200);
      expect(labelled.body).toEqual({ numberJid: `${outside}@s.whatsapp.net`, labelId: '2', add: true });
      expect(await chatLabels(a.name, `${outside}@s.whatsapp.net`)).toEqual(['2']);
    });

    it('handleLabel refuses what it cannot do with a 400 saying what to fix', async () => {
      const handle = (body: unknown) => t.api('POST', `label/handleLabel/${a.name}`, { body });
      expect400(await handle({ number: b.number, labelId: '99', action: 'add' }), /label 99 does not exist on this account/);
      expect400(await handle({ number: b.number, labelId: '1', action: 'toggle' }), /action/);
      expect400(await handle({ labelId: '1', action: 'add' }), /number/);
      expect400(await handle({ number: b.number, labelId: 4, action: 'add' }), /labelId/);
      expect400(await handle({ number: 'abc', labelId: '1', action: 'add' }), /number must be a phone number/);
      expect(await chatLabels(a.name, b.owner)).toEqual(['1']);
    });

    it('sandbox/label creates, renames, recolours and deletes labels: labels.edit each time; a deleted label leaves its chats', async () => {
      const created = await t.api('POST', `sandbox/label/${a.name}`, { body: { name: 'VIP' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toEqual({ id: '6', name: 'VIP', color: 6, deleted: false });
      const renamed = await t.api('POST', `sandbox/label/${a.name}`, { body: { id: '6', name: 'Gold', color: 11 } });
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      expect(renamed.body).toEqual({ id: '6', name: 'Gold', color: 11, deleted: false });
      expect((await t.api('GET', `label/findLabels/${a.name}`)).body).toEqual([...defaultLabels, { color: '11', name: 'Gold', id: '6', predefinedId: null }]);

      expect((await t.api('POST', `label/handleLabel/${a.name}`, { body: { number: b.number, labelId: '6', action: 'add' } })).status).toBe(200);
      expect(await chatLabels(a.name, b.owner)).toEqual(['1', '6']);
      const deleted = await t.api('POST', `sandbox/label/${a.name}`, { body: { id: '6', deleted: true } });
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      expect(deleted.body).toEqual({ id: '6', name: 'Gold', color: 11, deleted: true });
      await rx.waitFor(() => events('labels.edit', a.name).length === 3);
      expect(events('labels.edit', a.name)).toEqual([
        { id: '6', name: 'VIP', color: 6, deleted: false, instance: a.name },
        { id: '6', name: 'Gold', color: 11, deleted: false, instance: a.name },
        { id: '6', name: 'Gold', color: 11, deleted: true, instance: a.name },
      ]);
      expect((await t.api('GET', `label/findLabels/${a.name}`)).body).toEqual(defaultLabels);
      expect(await chatLabels(a.name, b.owner)).toEqual(['1']);
      // A predefined label can be renamed too; it keeps its predefined id.
      const paid = await t.api('POST', `sandbox/label/${a.name}`, { body: { id: '4', name: 'Paid in full' } });
      expect(paid.body).toEqual({ id: '4', name: 'Paid in full', color: 4, deleted: false, predefinedId: '4' });
      await rx.waitFor(() => events('labels.edit', a.name).length === 4);
      expect(events('labels.edit', a.name)[3]).toEqual({ id: '4', name: 'Paid in full', color: 4, deleted: false, predefinedId: '4', instance: a.name });
    });

    it('sandbox/label refuses bad edits with a 400', async () => {
      const edit = (body: unknown) => t.api('POST', `sandbox/label/${a.name}`, { body });
      expect400(await edit({}), /name is required to create a label/);
      expect400(await edit({ id: '77', name: 'X' }), /label 77 does not exist/);
      expect400(await edit({ name: 'X', color: 20 }), /color/);
      expect400(await edit({ deleted: true }), /id is required to delete a label/);
    });

    it('labels survive a restart of the instance; an instance not linked lists none and cannot label', async () => {
      expect((await t.api('POST', `instance/restart/${a.name}`)).status).toBeLessThan(300);
      expect((await t.api('GET', `label/findLabels/${a.name}`)).body.map((label: Json) => label.name)).toContain('Paid in full');
      const name = uniqueName('lab-unlinked');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } })).status).toBe(201);
      expect((await t.api('GET', `label/findLabels/${name}`)).body).toEqual([]);
      expect400(await t.api('POST', `label/handleLabel/${name}`, { body: { number: b.number, labelId: '1', action: 'add' } }), /not connected/);
      expect400(await t.api('POST', `sandbox/label/${name}`, { body: { name: 'X' } }), /not linked/);
    });

    it('an instance deleted takes its labels with it', async () => {
      const c = await party(t, rx, 'lab-c');
      const id = (await t.api('GET', `instance/fetchInstances?instanceName=${c.name}`)).body[0].instance.instanceId;
      const db = t.services.store.db;
      expect(await db.selectFrom('labels').select('label_id').where('instance_id', '=', id).execute()).toHaveLength(5);
      expect((await t.api('DELETE', `instance/delete/${c.name}`)).status).toBe(200);
      expect(await db.selectFrom('labels').select('label_id').where('instance_id', '=', id).execute()).toEqual([]);
      expect(await db.selectFrom('sandbox_labels').select('label_id').where('instance_id', '=', id).execute()).toEqual([]);
    });

    it('the OpenAPI document describes the label routes: their bodies and their answers', async () => {
      const doc = await t.api('GET', 'docs/json', { key: null });
      expect(doc.status).toBe(200);
      const find = doc.body.paths['/messenger/label/findLabels/{instance}'].get;
      const listed = find.responses['200'].content['application/json'].schema;
      expect(listed.type).toBe('array');
      expect(Object.keys(listed.items.properties)).toEqual(['color', 'name', 'id', 'predefinedId']);
      const handle = doc.body.paths['/messenger/label/handleLabel/{instance}'].post;
      const body = handle.requestBody.content['application/json'].schema;
      expect(body.required).toEqual(['number', 'labelId', 'action']);
      expect(JSON.stringify(body.properties.action)).toContain('remove');
      expect(Object.keys(handle.responses['200'].content['application/json'].schema.properties)).toEqual(['numberJid', 'labelId', 'add', 'remove']);
      const edit = doc.body.paths['/messenger/sandbox/label/{instance}'].post;
      expect(Object.keys(edit.requestBody.content['application/json'].schema.properties)).toEqual(['id', 'name', 'color', 'deleted']);
      expect(Object.keys(edit.responses)).toEqual(expect.arrayContaining(['200', '201']));
    });

    it('WHATSAPP-BUSINESS and EVOLUTION answer "Method not available" naming the integration', async () => {
      const business = uniqueName('lab-meta');
      const evolution = uniqueName('lab-evo');
      expect(
        (
          await t.api('POST', 'instance/create', {
            body: { instanceName: business, integration: 'WHATSAPP-BUSINESS', token: 'meta-token-labels', number: '106540352242923' },
          })
        ).status,
      ).toBe(201);
      expect((await t.api('POST', 'instance/create', { body: { instanceName: evolution, integration: 'EVOLUTION' } })).status).toBe(201);
      for (const [name, label] of [
        [business, 'WhatsApp Business API'],
        [evolution, 'Evolution Channel'],
      ]) {
        expect400(await t.api('GET', `label/findLabels/${name}`), new RegExp(`Method not available on ${label}`));
        expect400(
          await t.api('POST', `label/handleLabel/${name}`, { body: { number: b.number, labelId: '1', action: 'add' } }),
          new RegExp(`Method not available on ${label}`),
        );
        // The sandbox's own label route is for sandbox accounts only.
        expect400(await t.api('POST', `sandbox/label/${name}`, { body: { name: 'VIP' } }), /is not a SANDBOX instance/);
      }
    });
  });
});
