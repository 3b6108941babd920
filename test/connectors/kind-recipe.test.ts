// The recipe for a new connector kind holds: a test-only fifth kind, registered through the same list as the four,
// is created over HTTP, sends a text (recorded SERVER_ACK and announced) and is refused what it lacks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorKinds } from '../../src/connectors/kinds.js';
import { silentLogger } from '../../src/platform/logger.js';
import { echoKind, echoKindName } from '../fixtures/echo-kind.js';
import { startApp, startReceiver, storeTargets, type TestApp } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

const targets = await storeTargets();

describe.each(targets)('a fifth connector kind on $name', (target) => {
  describe.skipIf(!target.available)('registered by a test', () => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const echo = echoKind();

    beforeAll(async () => {
      receiver = await startReceiver();
      t = await startApp(target, {}, silentLogger(), [...connectorKinds, () => echo.kind]);
    });
    afterAll(async () => {
      await t?.close();
      await receiver?.close();
    });

    it('is created over HTTP, sends a text, and answers "Method not available" for what it lacks', async () => {
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: 'echo-1', integration: echoKindName, webhook: { url: `${receiver.url}/echo`, events: ['SEND_MESSAGE'] } },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.instance).toMatchObject({ instanceName: 'echo-1', integration: echoKindName, status: 'created' });
      // Always on: open from creation.
      expect((await t.api('GET', 'instance/connectionState/echo-1')).body).toEqual({ instance: { instanceName: 'echo-1', state: 'open' } });

      const sent = await t.api('POST', 'message/sendText/echo-1', { body: { number: '5511955556666', text: 'hello from a fifth kind' } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      const keyId: string = sent.body.key.id;
      const status = async () =>
        (await t.services.store.db.selectFrom('messages').select('status').where('key_id', '=', keyId).executeTakeFirstOrThrow()).status;
      expect(await waitFor(async () => ((await status()) === 'SERVER_ACK' ? 'SERVER_ACK' : undefined))).toBe('SERVER_ACK');
      await receiver.waitFor((events) => events.some((e) => e.body.event === 'send.message' && e.body.data.key.id === keyId));
      expect(echo.sent.map((m) => ({ keyId: m.keyId, remoteJid: m.remoteJid, content: m.content }))).toEqual([
        { keyId, remoteJid: '5511955556666@s.whatsapp.net', content: { conversation: 'hello from a fifth kind' } },
      ]);

      const presence = await t.api('POST', 'chat/sendPresence/echo-1', { body: { number: '5511955556666', presence: 'composing' } });
      expect(presence.status).toBe(400);
      expect(presence.body.response.message).toEqual(['Method not available on Echo Test (integration TEST-ECHO cannot do presence)']);
    });

    it('is listed among the integrations a create may name', async () => {
      const refused = await t.api('POST', 'instance/create', { body: { instanceName: 'echo-2', integration: 'TELEGRAM' } });
      expect(refused.status).toBe(400);
      expect(refused.body.response.message.join(' ')).toMatch(/WHATSAPP-BAILEYS, WHATSAPP-BUSINESS, EVOLUTION, SANDBOX, TEST-ECHO/);
    });
  });
});
