// The event transports as a user switches them on: environment settings, the set routes, and a real consumer each.
import { randomBytes } from 'node:crypto';
import { connect as amqpConnect } from 'amqplib';
import { connect as natsConnect, StringCodec } from 'nats';
import { io as ioClient } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkedSandbox, startApp, storeTargets, type TestApp } from '../support/harness.js';
import { waitFor } from '../support/wait.js';
import { AMQP_URI, NATS_URL, natsAvailable, rabbitAvailable } from '../support/brokers.js';

const brokersUp = (await rabbitAvailable('the transport wiring suite is')) && (await natsAvailable('the transport wiring suite is'));
const targets = await storeTargets();

describe.each(targets)('event transports switched on by configuration ($name)', (target) => {
  describe.skipIf(!target.available || !brokersUp)('websocket, RabbitMQ and NATS', () => {
    const run = randomBytes(4).toString('hex');
    const name = `wire-${run}`;
    const stream = `WIRE_${run.toUpperCase()}`;
    let t: TestApp;
    let apikey: string;

    beforeAll(async () => {
      t = await startApp(target, {
        WEBSOCKET_ENABLED: 'true',
        RABBITMQ_ENABLED: 'true',
        RABBITMQ_URI: AMQP_URI,
        RABBITMQ_EXCHANGE_NAME: `wire_global_${run}`,
        NATS_ENABLED: 'true',
        NATS_URL,
        NATS_STREAM: stream,
      });
      apikey = (await linkedSandbox(t, name, '5511933330001')).apikey;
    });
    afterAll(async () => {
      await t?.close();
      const model = await amqpConnect(AMQP_URI).catch(() => undefined);
      if (model) {
        const channel = await model.createChannel();
        await channel.deleteQueue(`${name}.messages.upsert`).catch(() => undefined);
        await channel.deleteExchange(name).catch(() => undefined);
        await model.close();
      }
      const nc = await natsConnect({ servers: NATS_URL }).catch(() => undefined);
      if (nc) {
        await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
        await nc.close();
      }
    });

    it('delivers an incoming message to a socket.io client, a RabbitMQ queue and a NATS subscriber', async () => {
      for (const [path, body] of [
        ['websocket/set', { websocket: { enabled: true, events: ['MESSAGES_UPSERT'] } }],
        ['rabbitmq/set', { rabbitmq: { enabled: true, events: ['MESSAGES_UPSERT'] } }],
        ['nats/set', { nats: { enabled: true, events: ['MESSAGES_UPSERT'] } }],
      ] as const) {
        const res = await t.api('POST', `${path}/${name}`, { key: apikey, body });
        expect(res.status, path).toBe(201);
      }

      const socketEvents: { event: string; data: { message: { conversation: string } } }[] = [];
      const socket = ioClient(`${t.url}/${name}`, { transports: ['websocket'], auth: { apikey }, reconnection: false });
      socket.on('messages.upsert', (payload) => socketEvents.push(payload));
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('connect_error', reject);
      });
      const nc = await natsConnect({ servers: NATS_URL });
      const natsMessages: string[] = [];
      const subscription = nc.subscribe(`${name}.messages.upsert`, { callback: (_error, msg) => natsMessages.push(StringCodec().decode(msg.data)) });

      try {
        const injected = await t.api('POST', `sandbox/inject/${name}`, { key: apikey, body: { from: '5511933330002', text: 'to every transport' } });
        expect(injected.status).toBe(201);

        await waitFor(() => socketEvents.length === 1, 10_000);
        expect(socketEvents[0]).toMatchObject({ event: 'messages.upsert', instance: name, data: { message: { conversation: 'to every transport' } } });
        expect(socketEvents[0]).not.toHaveProperty('destination');

        await waitFor(() => natsMessages.length === 1, 10_000);
        expect(JSON.parse(natsMessages[0])).toMatchObject({ event: 'messages.upsert', instance: name });

        // Each look on a connection of its own: a quorum queue whose process is still starting answers a basic.get
        // with a connection error (541 "noproc") on a slow machine, which closes the connection it came on.
        const got = await waitFor(async () => {
          const model = await amqpConnect(AMQP_URI);
          model.on('error', () => undefined);
          try {
            const channel = await model.createChannel();
            const message = await channel.get(`${name}.messages.upsert`, { noAck: true }).catch(() => false as const);
            return message === false ? undefined : message;
          } finally {
            await model.close().catch(() => undefined);
          }
        }, 10_000);
        expect(got.fields.routingKey).toBe('messages.upsert');
        expect(got.fields.exchange).toBe(name);
        expect(JSON.parse(got.content.toString())).toMatchObject({
          event: 'messages.upsert',
          instance: name,
          data: { message: { conversation: 'to every transport' } },
        });
      } finally {
        subscription.unsubscribe();
        await nc.close();
        socket.close();
      }
    });
  });
});
