// Linking a WHATSAPP-BAILEYS instance when WhatsApp Web cannot be reached, over HTTP with real baileys, on both stores:
// connect answers 503 with the reason (with or without a pairing number), and connectionState, fetchInstances and the
// connection.update events all say the same state and why, on every attempt.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type TestApp } from '../../support/harness.js';
import { waitFor } from '../../support/wait.js';

const targets = await storeTargets();

/** A TCP server that accepts connections and never answers (WhatsApp Web behind a firewall that swallows traffic). */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Unreachable {
  name: string;
  /** WA_WEBSOCKET_URL, once the test's servers exist. */
  url(): string;
  /** The reason every answer and event carries. */
  reason: RegExp;
  /** How long connect may take to answer (an attempt that hangs ends at WA_CONNECT_TIMEOUT_MS). */
  answersWithinMs: number;
}

let silent: Awaited<ReturnType<typeof silentServer>>;
let refusedPort: number;

const cases: Unreachable[] = [
  {
    name: 'an address that refuses',
    url: () => `ws://127.0.0.1:${refusedPort}/ws/chat`,
    reason: /^cannot reach WhatsApp Web at 127\.0\.0\.1:\d+: connection refused \(ECONNREFUSED\)/,
    answersWithinMs: 3_000,
  },
  {
    name: 'a name that does not resolve',
    url: () => 'ws://switchboard-test.invalid/ws/chat',
    // No resolver at all answers EAI_AGAIN instead of ENOTFOUND; both name the host.
    reason: /^cannot reach WhatsApp Web: (the name switchboard-test\.invalid does not resolve|looking up switchboard-test\.invalid failed)/,
    answersWithinMs: 3_000,
  },
  {
    name: 'an address that hangs',
    url: () => `ws://127.0.0.1:${silent.port}/ws/chat`,
    reason: /^no answer from WhatsApp Web at 127\.0\.0\.1:\d+ (within 1 s|for \d+ s)/,
    answersWithinMs: 4_000,
  },
];

beforeAll(async () => {
  silent = await silentServer();
  refusedPort = await closedPort();
});
afterAll(async () => {
  await silent?.close();
});

describe.each(targets)('linking when WhatsApp Web cannot be reached, on $name', (target) => {
  describe.skipIf(!target.available).each(cases)('$name', (unreachable) => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    beforeAll(async () => {
      receiver = await startReceiver();
      t = await startApp(target, {
        WA_WEBSOCKET_URL: unreachable.url(),
        WA_CONNECT_TIMEOUT_MS: '1000',
        WA_RECONNECT_BASE_MS: '200',
        WA_RECONNECT_MAX_MS: '400',
      });
    });
    afterAll(async () => {
      await t?.close();
      await receiver?.close();
    });

    it('create, connect (with and without a pairing number), connectionState, fetchInstances and the events agree and say why', async () => {
      const startedAt = Date.now();
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: 'phone1', qrcode: true, webhook: { url: `${receiver.url}/hook`, events: ['CONNECTION_UPDATE'] } },
      });
      expect(created.status).toBe(201);
      expect(Date.now() - startedAt).toBeLessThan(unreachable.answersWithinMs + 1_500);
      // No QR code to show: the create says why instead of a bare {count: 0}.
      expect(created.body.qrcode).toEqual({ count: 0, reason: expect.stringMatching(unreachable.reason), statusReason: 408 });

      for (const path of ['instance/connect/phone1', 'instance/connect/phone1?number=5511999990000']) {
        const askedAt = Date.now();
        const connect = await t.api('GET', path);
        expect(Date.now() - askedAt, path).toBeLessThan(unreachable.answersWithinMs);
        expect(connect.status, path).toBe(503);
        expect(connect.body, path).toEqual({
          status: 503,
          error: 'Service Unavailable',
          response: {
            message: [expect.stringMatching(unreachable.reason), expect.stringMatching(/^the instance (tries again by itself in \d+ s|is trying again now)/)],
          },
        });
        expect(connect.body.response.message[1]).toContain('POST /messenger/instance/restart/phone1');
      }

      // The state and the list tell the same thing at the same moment.
      const state = (await t.api('GET', 'instance/connectionState/phone1')).body.instance;
      const listed = (await t.api('GET', 'instance/fetchInstances?instanceName=phone1')).body[0].instance;
      expect(state).toEqual({ instanceName: 'phone1', state: 'connecting', reason: expect.stringMatching(unreachable.reason), statusReason: 408 });
      expect(listed).toMatchObject({ instanceName: 'phone1', status: 'connecting', reason: expect.stringMatching(unreachable.reason), statusReason: 408 });

      // The webhook hears every attempt, each failure with its reason and code.
      await receiver.waitFor((events) => events.filter((e) => e.body.data.reason).length >= 3, 10_000);
      const updates = receiver.of('connection.update', 'phone1').map((e) => e.body.data);
      expect(updates[0]).toEqual({ instance: 'phone1', state: 'connecting', statusReason: 200 });
      for (const update of updates.slice(1)) {
        expect(update).toEqual({ instance: 'phone1', state: 'connecting', statusReason: 408, reason: expect.stringMatching(unreachable.reason) });
      }

      // Deleting the instance stops the attempts: its last word is the close, then nothing.
      expect((await t.api('DELETE', 'instance/delete/phone1')).status).toBe(200);
      await receiver.waitFor((events) => events.some((e) => e.body.instance === 'phone1' && e.body.data.state === 'close'));
      const after = receiver.of('connection.update', 'phone1').length;
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(receiver.of('connection.update', 'phone1').length).toBe(after);
    });

    it('a restart answers the same way, at once', async () => {
      const created = await t.api('POST', 'instance/create', { body: { instanceName: 'phone2' } });
      expect(created.status).toBe(201);
      // Not connecting yet: the state is close, with nothing to explain.
      expect((await t.api('GET', 'instance/connectionState/phone2')).body.instance).toEqual({ instanceName: 'phone2', state: 'close' });
      expect((await t.api('GET', 'instance/fetchInstances?instanceName=phone2')).body[0].instance.status).toBe('close');
      const restart = await t.api('POST', 'instance/restart/phone2');
      expect(restart.status).toBe(503);
      expect(restart.body.response.message[0]).toMatch(unreachable.reason);
      await waitFor(async () => (await t.api('GET', 'instance/connectionState/phone2')).body.instance.state === 'connecting', 5_000);
      expect((await t.api('DELETE', 'instance/delete/phone2')).status).toBe(200);
    });
  });
});
