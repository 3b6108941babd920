// The webhook sending thread for real: a ThreadSender (its worker started from TypeScript source through the tsx
// bootstrap) sending to a node:http receiver on loopback. Verdicts are checked against what the receiver saw.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/platform/logger.js';
import type { SendRules, WebhookRequest } from '../../../src/sinks/webhook/ordered-send.js';
import type { Verdict } from '../../../src/sinks/webhook/outcome.js';
import { ThreadSender } from '../../../src/sinks/webhook/thread/host.js';
import { sleep, waitFor } from '../../support/wait.js';

const rules: SendRules = { timeoutMs: 2000, nonRetryable: [400, 401, 403, 404, 422] };

/** Sends with a start deadline far enough away not to matter (the deadline has its own test). */
function send(sender: ThreadSender, requests: WebhookRequest[], startBefore = Date.now() + 60_000): Promise<Verdict[]> {
  return sender.send(requests, startBefore);
}

// ---------------------------------------------------------------------------------------------------------------
// The receiver. Its path says how to answer:
//   /ok            200 at once
//   /status/<n>    status n at once
//   /delay/<ms>    200 after ms
//   /hang          never answers (until the server closes)

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When the request (body included) arrived, and when it was answered (undefined: not answered). */
  arrivedAt: number;
  answeredAt?: number;
}

interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

const receivers = new Set<Receiver>();
const senders = new Set<ThreadSender>();

afterEach(async () => {
  for (const sender of [...senders]) await sender.stop();
  senders.clear();
  for (const receiver of [...receivers]) await receiver.close();
  receivers.clear();
});

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry: Received = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), arrivedAt: Date.now() };
      received.push(entry);
      const answer = (status: number, response: ServerResponse) => {
        entry.answeredAt = Date.now();
        response.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      };
      const [, kind, arg] = entry.path.split('/');
      if (kind === 'ok') answer(200, res);
      else if (kind === 'status') answer(Number(arg), res);
      else if (kind === 'delay') {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer(200, res);
        }, Number(arg));
        timers.add(timer);
      } else if (kind !== 'hang') answer(500, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
  receivers.add(receiver);
  return receiver;
}

function startSender(sendRules: SendRules = rules): ThreadSender {
  const sender = new ThreadSender({ rules: sendRules, denyPrivate: false }, silentLogger());
  senders.add(sender);
  sender.start();
  return sender;
}

function request(url: string, body: string, lastAttempt = false, headers: Record<string, string> = {}): WebhookRequest {
  return { url, body, lastAttempt, headers: { 'content-type': 'application/json', ...headers } };
}

/** Waits (bounded) until the receiver has seen `count` requests. */
async function receivedCount(receiver: Receiver, count: number, timeoutMs = 5000): Promise<void> {
  await waitFor(() => receiver.received.length >= count, timeoutMs, {
    intervalMs: 10,
    what: () => `${count} requests (the receiver saw ${receiver.received.length})`,
  });
}

const bodiesSeen = (receiver: Receiver) => receiver.received.map((r) => r.body);

// ---------------------------------------------------------------------------------------------------------------

describe('ThreadSender (real worker thread, real HTTP receiver)', () => {
  it('delivers a lane in the order given, one request at a time, headers and bodies as sent', async () => {
    const rx = await startReceiver();
    const sender = startSender();
    const bodies = [0, 1, 2, 3, 4].map((i) => JSON.stringify({ seq: i, text: `olá ✓ ${i}` }));
    // A short delay per answer: were the requests sent concurrently, they would overlap at the receiver.
    const requests = bodies.map((body, i) => request(`${rx.url}/delay/30`, body, false, { 'webhook-id': `msg_${i}`, 'x-test-lane': 'lane-1' }));

    const verdicts = await send(sender, requests);

    expect(verdicts).toEqual(bodies.map(() => ({ kind: 'delivered', status: 200 })));
    expect(bodiesSeen(rx)).toEqual(bodies);
    rx.received.forEach((r, i) => {
      expect(r.path).toBe('/delay/30');
      expect(r.headers['webhook-id']).toBe(`msg_${i}`);
      expect(r.headers['x-test-lane']).toBe('lane-1');
      expect(r.headers['content-type']).toBe('application/json');
      expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(bodies[i], 'utf8'));
    });
    for (let i = 1; i < rx.received.length; i++) {
      expect(rx.received[i].arrivedAt).toBeGreaterThanOrEqual(rx.received[i - 1].answeredAt!);
    }

    // Other 2xx statuses are delivered too, with their status.
    expect(await send(sender, [request(`${rx.url}/status/204`, '{"n":1}'), request(`${rx.url}/status/202`, '{"n":2}')])).toEqual([
      { kind: 'delivered', status: 204 },
      { kind: 'delivered', status: 202 },
    ]);
  });

  it('starts no request once the batch start deadline has passed (the claim would run out)', async () => {
    const rx = await startReceiver();
    const sender = startSender();
    // A started thread first (starting it takes longer than the deadline below).
    expect(await send(sender, [request(`${rx.url}/ok`, '{"warm":true}')])).toEqual([{ kind: 'delivered', status: 200 }]);
    rx.received.length = 0;
    // The first request takes 300 ms; the deadline passes meanwhile, so the second is not started.
    const verdicts = await send(sender, [request(`${rx.url}/delay/300`, '{"n":1}'), request(`${rx.url}/ok`, '{"n":2}')], Date.now() + 150);
    expect(verdicts).toEqual([{ kind: 'delivered', status: 200 }]);
    expect(bodiesSeen(rx)).toEqual(['{"n":1}']);
    // A deadline already past: nothing is sent.
    expect(await send(sender, [request(`${rx.url}/ok`, '{"n":3}')], Date.now() - 1)).toEqual([]);
    expect(bodiesSeen(rx)).toEqual(['{"n":1}']);
  });

  it('stops after a failure that holds the lane: the rest is never sent', async () => {
    const rx = await startReceiver();
    const sender = startSender();
    const bodies = ['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}'];
    const verdicts = await send(sender, [
      request(`${rx.url}/ok`, bodies[0]),
      request(`${rx.url}/status/500`, bodies[1]),
      request(`${rx.url}/ok`, bodies[2]),
      request(`${rx.url}/ok`, bodies[3]),
    ]);

    expect(verdicts).toEqual([
      { kind: 'delivered', status: 200 },
      { kind: 'failed', status: 500, error: 'HTTP 500' },
    ]);
    await sleep(200); // anything sent by mistake would have arrived by now
    expect(bodiesSeen(rx)).toEqual(bodies.slice(0, 2));
  });

  it('goes on after a failure of a last attempt (dead-lettered, the lane does not wait)', async () => {
    const rx = await startReceiver();
    const sender = startSender();
    const bodies = ['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}'];
    const verdicts = await send(sender, [
      request(`${rx.url}/ok`, bodies[0]),
      request(`${rx.url}/status/500`, bodies[1], true),
      request(`${rx.url}/ok`, bodies[2]),
      request(`${rx.url}/status/201`, bodies[3]),
    ]);

    expect(verdicts).toEqual([
      { kind: 'delivered', status: 200 },
      { kind: 'failed', status: 500, error: 'HTTP 500' },
      { kind: 'delivered', status: 200 },
      { kind: 'delivered', status: 201 },
    ]);
    expect(bodiesSeen(rx)).toEqual(bodies);
  });

  it('goes on after a non-retryable status (rejected)', async () => {
    const rx = await startReceiver();
    const sender = startSender();
    const bodies = ['{"n":1}', '{"n":2}', '{"n":3}'];
    const verdicts = await send(sender, [request(`${rx.url}/ok`, bodies[0]), request(`${rx.url}/status/404`, bodies[1]), request(`${rx.url}/ok`, bodies[2])]);

    expect(verdicts).toEqual([
      { kind: 'delivered', status: 200 },
      { kind: 'rejected', status: 404, error: 'HTTP 404 (not retried)' },
      { kind: 'delivered', status: 200 },
    ]);
    expect(bodiesSeen(rx)).toEqual(bodies);
  });

  it('serves lanes concurrently: a slow receiver does not hold up another lane', async () => {
    const rx = await startReceiver();
    const sender = startSender();
    // Warm up, so the thread's start-up does not count in the timings below.
    expect(await send(sender, [request(`${rx.url}/ok`, '{"warm":true}')])).toEqual([{ kind: 'delivered', status: 200 }]);

    const t0 = Date.now();
    const finished: string[] = [];
    const slow = send(sender, [request(`${rx.url}/delay/1000`, '{"lane":"slow"}')]).then((v) => {
      finished.push('slow');
      return { verdicts: v, at: Date.now() - t0 };
    });
    const fast = send(sender, [request(`${rx.url}/ok`, '{"lane":"fast"}')]).then((v) => {
      finished.push('fast');
      return { verdicts: v, at: Date.now() - t0 };
    });
    const [slowDone, fastDone] = await Promise.all([slow, fast]);

    expect(fastDone.verdicts).toEqual([{ kind: 'delivered', status: 200 }]);
    expect(slowDone.verdicts).toEqual([{ kind: 'delivered', status: 200 }]);
    expect(finished).toEqual(['fast', 'slow']);
    expect(fastDone.at).toBeLessThan(500);
    expect(slowDone.at).toBeGreaterThanOrEqual(950);
    expect(slowDone.at - fastDone.at).toBeGreaterThan(500);
    // Both reached the receiver, the fast one while the slow one was still unanswered.
    const slowSeen = rx.received.find((r) => r.body === '{"lane":"slow"}');
    const fastSeen = rx.received.find((r) => r.body === '{"lane":"fast"}');
    expect(slowSeen?.path).toBe('/delay/1000');
    expect(fastSeen?.path).toBe('/ok');
    expect(fastSeen!.arrivedAt).toBeLessThan(slowSeen!.answeredAt!);
  });

  it('stop() abandons a request in flight promptly (released), sends nothing after, and start() sends again', async () => {
    const rx = await startReceiver();
    const sender = startSender();
    const pending = send(sender, [request(`${rx.url}/hang`, '{"n":1}'), request(`${rx.url}/ok`, '{"n":2}')]);
    await receivedCount(rx, 1);

    const t0 = Date.now();
    const [verdicts] = await Promise.all([pending.then((v) => ({ v, at: Date.now() - t0 })), sender.stop()]);
    const stoppedAfter = Date.now() - t0;

    // `released` for the abandoned request (an empty answer would also mean "not attempted"); the next one untried.
    expect(verdicts.v.length).toBeLessThanOrEqual(1);
    for (const verdict of verdicts.v) expect(verdict).toEqual<Verdict>({ kind: 'released' });
    expect(verdicts.at).toBeLessThan(1000);
    expect(stoppedAfter).toBeLessThan(1000);

    // Stopped: nothing is attempted, the receiver is not contacted.
    expect(await send(sender, [request(`${rx.url}/ok`, '{"n":3}')])).toEqual([]);
    await sleep(100);
    expect(bodiesSeen(rx)).toEqual(['{"n":1}']);

    sender.start();
    expect(await send(sender, [request(`${rx.url}/ok`, '{"n":4}')])).toEqual([{ kind: 'delivered', status: 200 }]);
    expect(bodiesSeen(rx)).toEqual(['{"n":1}', '{"n":4}']);
  });

  it('a receiver answering after the time limit is a failure naming the limit, and holds the lane', async () => {
    const rx = await startReceiver();
    const sender = startSender({ ...rules, timeoutMs: 400 });
    // Warm up, so the thread's start-up does not count in the timing below.
    expect(await send(sender, [request(`${rx.url}/ok`, '{"warm":true}')])).toEqual([{ kind: 'delivered', status: 200 }]);

    const t0 = Date.now();
    const verdicts = await send(sender, [request(`${rx.url}/delay/1500`, '{"n":1}'), request(`${rx.url}/ok`, '{"n":2}')]);
    const took = Date.now() - t0;

    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]).toMatchObject({ kind: 'failed', status: null });
    expect(verdicts[0].kind === 'failed' && verdicts[0].error).toMatch(/\b400 ms\b/);
    expect(took).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(1400);
    expect(bodiesSeen(rx)).toEqual(['{"warm":true}', '{"n":1}']);
  });

  it('starts the thread again after it dies; jobs in flight then answer as not attempted', async () => {
    const rx = await startReceiver();
    const sender = startSender();
    expect(await send(sender, [request(`${rx.url}/ok`, '{"n":1}')])).toEqual([{ kind: 'delivered', status: 200 }]);

    // Escape hatch: nothing public makes the thread die (sendInOrder turns every request failure into a verdict, and
    // the thread's message handler has no failing path), and mocking node:worker_threads would replace the very
    // thread under test. So the private Worker is reached through a narrow cast and terminated like a crash would
    // end it. The instanceof check makes a renamed field fail here instead of passing vacuously.
    const workerOf = () => (sender as unknown as { worker?: Worker }).worker;
    const first = workerOf();
    expect(first).toBeInstanceOf(Worker);

    const inFlight = send(sender, [request(`${rx.url}/hang`, '{"n":2}')]);
    await receivedCount(rx, 2);
    await first!.terminate();

    // The dead thread's job answers "nothing attempted"; while it is down, nothing is sent.
    expect(await inFlight).toEqual([]);
    expect(workerOf()).toBeUndefined();
    expect(await send(sender, [request(`${rx.url}/ok`, '{"n":3}')])).toEqual([]);

    await sleep(1500);
    const second = workerOf();
    expect(second).toBeInstanceOf(Worker);
    expect(second).not.toBe(first);
    expect(await send(sender, [request(`${rx.url}/ok`, '{"n":4}')])).toEqual([{ kind: 'delivered', status: 200 }]);
    expect(bodiesSeen(rx)).toEqual(['{"n":1}', '{"n":2}', '{"n":4}']);
  });
});
