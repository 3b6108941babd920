// The tests' RabbitMQ and NATS (JetStream): where they are and whether they answer.
import { connect as amqpConnect } from 'amqplib';
import { connect as natsConnect } from 'nats';
import { problemOf, serviceAvailable } from './required-services.js';

export const AMQP_URI = process.env.TEST_RABBITMQ_URI ?? 'amqp://guest:guest@127.0.0.1:5672';
export const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** Whether RabbitMQ accepts a connection; when not, a loud skip of `skipped` (a failure under REQUIRE_SERVICES=1). */
export async function rabbitAvailable(skipped: string): Promise<boolean> {
  const problem = await problemOf(async () => (await amqpConnect(AMQP_URI, { timeout: 2000 })).close());
  return serviceAvailable('RabbitMQ', AMQP_URI.replace(/\/\/[^@]*@/, '//'), problem, skipped);
}

/** Whether NATS answers with JetStream on; when not, a loud skip of `skipped` (a failure under REQUIRE_SERVICES=1). */
export async function natsAvailable(skipped: string): Promise<boolean> {
  const problem = await problemOf(async () => {
    const nc = await natsConnect({ servers: NATS_URL, timeout: 2000, maxReconnectAttempts: 0 });
    try {
      await (await nc.jetstreamManager()).getAccountInfo();
    } finally {
      await nc.close();
    }
  });
  return serviceAvailable('NATS (JetStream)', NATS_URL, problem, skipped);
}
