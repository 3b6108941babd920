// instance/setPresence and chat/whatsappNumbers over HTTP on both stores: a linked sandbox pair (the presence shown to
// the other instance at a real HTTP receiver; numbers found by any spelling of their account), the validation 400s,
// and "Method not available" on EVOLUTION.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkedSandbox, startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { uniqueName, uniqueNumber } from '../support/unique.js';
import { expect400 } from '../support/answers.js';

const targets = await storeTargets();

describe.each(targets)('setPresence and whatsappNumbers over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    const a = { name: uniqueName('pn-a'), number: uniqueNumber('4915'), owner: '' };
    // A Brazilian mobile with its ninth digit: asked for without it, it is still found.
    const b = { name: uniqueName('pn-b'), number: uniqueNumber('55119'), owner: '' };
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a.owner = (await linkedSandbox(t, a.name, a.number)).owner;
      b.owner = (await linkedSandbox(t, b.name, b.number)).owner;
      const hook = await t.api('POST', `webhook/set/${b.name}`, { body: { webhook: { enabled: true, url: rx.url, events: [] } } });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('setPresence answers 201 {presence} and the other instance sees it (presence.update)', async () => {
      for (const presence of ['unavailable', 'available']) {
        const res = await t.api('POST', `instance/setPresence/${a.name}`, { body: { presence } });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        expect(res.body).toEqual({ presence });
        await rx.waitFor(() => rx.of('presence.update', b.name).some((e) => e.body.data?.presences?.[a.owner]?.lastKnownPresence === presence), 10_000);
      }
      const update = rx.of('presence.update', b.name).find((e) => e.body.data?.presences?.[a.owner]?.lastKnownPresence === 'available');
      expect(update!.body.data.id).toBe(a.owner);
    });

    it('setPresence refuses other values and a missing one, naming the allowed values', async () => {
      for (const body of [{ presence: 'composing' }, {}]) {
        expect400(await t.api('POST', `instance/setPresence/${a.name}`, { body }), /presence.*available, unavailable/);
      }
    });

    it('whatsappNumbers answers 200 with one entry per number, in order, the number echoed, with both addresses of an account', async () => {
      const shortB = b.number.slice(0, 4) + b.number.slice(5);
      const nobody = uniqueNumber('4916');
      const numbers = [`+${shortB}`, nobody, a.owner];
      const res = await t.api('POST', `chat/whatsappNumbers/${a.name}`, { body: { numbers } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual([
        { exists: true, jid: b.owner, number: `+${shortB}`, name: b.name, lid: expect.stringMatching(/^\d{15}@lid$/) },
        { exists: false, jid: `${nobody}@s.whatsapp.net`, number: nobody },
        { exists: true, jid: a.owner, number: a.owner, name: a.name, lid: expect.stringMatching(/^\d{15}@lid$/) },
      ]);
    });

    it('whatsappNumbers refuses groups, malformed numbers and an empty or missing list, naming the entry', async () => {
      const url = `chat/whatsappNumbers/${a.name}`;
      expect400(
        await t.api('POST', url, { body: { numbers: [a.number, '120363025555555555@g.us'] } }),
        /numbers\[1\] "120363025555555555@g.us" is not a phone number/,
      );
      expect400(await t.api('POST', url, { body: { numbers: ['status@broadcast'] } }), /numbers\[0\] "status@broadcast" is not a phone number/);
      expect400(await t.api('POST', url, { body: { numbers: ['12'] } }), /numbers\[0\] must be a phone number/);
      expect400(await t.api('POST', url, { body: { numbers: [] } }), /numbers/);
      expect400(await t.api('POST', url, { body: {} }), /numbers/);
    });

    it('the OpenAPI document has both routes with their request and answer schemas', async () => {
      const doc = await t.api('GET', 'docs/json', { key: null });
      expect(doc.status).toBe(200);
      const presence = doc.body.paths['/messenger/instance/setPresence/{instance}'].post;
      expect(JSON.stringify(presence.requestBody)).toContain('unavailable');
      expect(Object.keys(presence.responses)).toContain('201');
      const numbers = doc.body.paths['/messenger/chat/whatsappNumbers/{instance}'].post;
      expect(JSON.stringify(numbers.requestBody)).toContain('numbers');
      expect(JSON.stringify(numbers.responses['200'])).toContain('exists');
    });

    it('both answer 400 on an instance that is not linked', async () => {
      const name = uniqueName('pn-unlinked');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect400(await t.api('POST', `instance/setPresence/${name}`, { body: { presence: 'available' } }), /not connected/);
      expect400(await t.api('POST', `chat/whatsappNumbers/${name}`, { body: { numbers: [a.number] } }), /not connected/);
    });

    it('both answer 400 "Method not available" on an EVOLUTION instance (as upstream)', async () => {
      const name = uniqueName('pn-evo');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'EVOLUTION' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect400(
        await t.api('POST', `instance/setPresence/${name}`, { body: { presence: 'available' } }),
        'Method not available on Evolution Channel (integration EVOLUTION cannot do presence)',
      );
      expect400(
        await t.api('POST', `chat/whatsappNumbers/${name}`, { body: { numbers: [a.number] } }),
        'Method not available on Evolution Channel (integration EVOLUTION cannot do whatsappNumbers)',
      );
    });
  });
});
