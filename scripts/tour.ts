// `npm run tour`: the README's tour run for you on the sandbox, printing each step, its answer and every event received.
//
// Without settings it starts a fresh service of its own (a new data folder, a free port, logs to a file there),
// waits for it to answer /health, runs the tour with a local webhook receiver, then stops it and removes the folder.
// TOUR_API_URL (e.g. http://localhost:8080) and TOUR_API_KEY (its global key) run the tour against a service already
// running instead. TOUR_DATABASE_URI gives the fresh service another store (e.g. a PostgreSQL URI).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const stepTimeoutMs = 20_000;

// biome-ignore lint/suspicious/noExplicitAny: answers and events are JSON of many shapes, read field by field
type Json = any;

interface Received {
  event: string;
  instance: string;
  data: Json;
}

const out = (line = '') => process.stdout.write(`${line}\n`);

/** The events the tour subscribes to: what the story is about (`events: []` would bring every event). */
const tourEvents = ['CONNECTION_UPDATE', 'QRCODE_UPDATED', 'SEND_MESSAGE', 'MESSAGES_UPSERT', 'MESSAGES_UPDATE', 'PRESENCE_UPDATE'];
let namesWidth = 5;

/** One line per event, in words: who, what, and the part a person looks at. */
function describeEvent(e: Received): string {
  const d = e.data ?? {};
  let detail = '';
  switch (e.event) {
    case 'connection.update':
      detail = `${d.state}${d.wuid ? ` as ${d.wuid}` : ''}`;
      break;
    case 'qrcode.updated':
      detail = `QR code ${d.qrcode?.code ? 'ready' : 'updated'}`;
      break;
    case 'messages.upsert':
      detail = `"${d.message?.conversation ?? d.message?.extendedTextMessage?.text ?? d.messageType}" from ${d.key?.remoteJid}`;
      break;
    case 'messages.update':
      detail = `${d.status} for ${d.keyId}`;
      break;
    case 'send.message':
      detail = `${d.key?.id} left for ${d.key?.remoteJid}`;
      break;
    case 'presence.update':
      detail = Object.values(d.presences ?? {})
        .map((p) => (p as { lastKnownPresence?: string }).lastKnownPresence)
        .join(', ');
      break;
    default:
      detail = JSON.stringify(d).slice(0, 100);
  }
  return `    ← ${e.instance.padEnd(namesWidth)} ${e.event.padEnd(17)} ${detail}`;
}

/** The local webhook receiver: prints every event as it arrives and keeps them for the steps to wait on. */
async function startReceiver(): Promise<{ url: string; events: Received[]; close(): Promise<void> }> {
  const events: Received[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      res.end();
      try {
        const e = JSON.parse(body) as Received;
        events.push(e);
        out(describeEvent(e));
      } catch {
        out(`    ← (a delivery that is not JSON: ${body.slice(0, 80)})`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    events,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function waitFor<T>(what: string, probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs = stepTimeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not seen within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A fresh service in a new data folder: started, answering /health, and how to stop it. */
async function startService(): Promise<{ url: string; key: string; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-tour-'));
  const port = await freePort();
  const key = `tour-${randomBytes(12).toString('hex')}`;
  const url = `http://127.0.0.1:${port}`;
  const logFile = join(dataDir, 'switchboard.log');
  const log = openSync(logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      AUTHENTICATION_API_KEY: key,
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      SERVER_URL: url,
      DATA_DIR: dataDir,
      DATABASE_CONNECTION_URI: process.env.TOUR_DATABASE_URI || `file:${join(dataDir, 'switchboard.db')}`,
      LOG_FORMAT: 'json',
    },
    stdio: ['ignore', log, log],
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  out(`Starting a fresh Switchboard on ${url} (data folder ${dataDir}; its log: ${logFile})`);
  const startedAt = Date.now();
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      'the service answering /health',
      async () => {
        if (child.exitCode !== null) throw new Error(`the service exited (code ${child.exitCode}); see ${logFile}`);
        const health = await fetch(`${url}/health`).catch(() => undefined);
        return health?.status === 200;
      },
      120_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  out(`It answers /health after ${((Date.now() - startedAt) / 1000).toFixed(1)} s.`);
  return { url, key, stop };
}

function client(base: string, key: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Json> => {
    const response = await fetch(`${base}/messenger/${path}`, {
      method,
      headers: { apikey: key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const answer = text ? JSON.parse(text) : null;
    if (!response.ok) throw new Error(`${method} /messenger/${path} answered ${response.status}: ${text}`);
    return answer;
  };
}

async function tour(api: ReturnType<typeof client>, receiver: Awaited<ReturnType<typeof startReceiver>>, shared: boolean): Promise<void> {
  const suffix = randomBytes(2).toString('hex');
  // On a service of its own: the README's names and numbers. On a shared one: names and numbers of their own, so the
  // tour can run again there.
  const number = (prefix: string) => `${prefix}${String(randomBytes(4).readUInt32BE(0) % 100_000_000).padStart(8, '0')}`;
  const alice = shared ? { name: `alice-${suffix}`, number: number('55119') } : { name: 'alice', number: '5511900000001' };
  const bob = shared ? { name: `bob-${suffix}`, number: number('55118') } : { name: 'bob', number: '5511900000002' };
  namesWidth = alice.name.length;
  const step = (n: number, title: string) => out(`\n${n}. ${title}`);
  const saw = (what: string, match: (e: Received) => boolean) => waitFor(what, () => receiver.events.find(match));

  step(1, 'Create two sandbox instances, each answering with a QR code (a PNG data URL and the code it encodes)');
  const codes: Record<string, string> = {};
  for (const party of [alice, bob]) {
    const created = await api('POST', 'instance/create', {
      instanceName: party.name,
      integration: 'SANDBOX',
      qrcode: true,
      webhook: { url: receiver.url, events: tourEvents },
    });
    codes[party.name] = created.qrcode.code;
    out(`  POST /messenger/instance/create ${party.name} → 201, instance key ${created.hash.apikey}, QR code ${created.qrcode.code}`);
  }

  step(2, '"Scan" each QR code with a phone number (what the phone does on WhatsApp)');
  for (const [party, profileName] of [
    [alice, 'Alice'],
    [bob, 'Bob'],
  ] as const) {
    const scanned = await api('POST', 'sandbox/scan', { code: codes[party.name], number: party.number, profileName });
    out(`  POST /messenger/sandbox/scan → ${party.name} is ${scanned.instance.status} as ${scanned.instance.owner}`);
    await saw(`${party.name} connection.update open`, (e) => e.instance === party.name && e.event === 'connection.update' && e.data.state === 'open');
  }

  step(3, 'Alice sends Bob a text; the answer is immediate (201 PENDING), the queue shows typing for `delay` ms, then delivers');
  const sent = await api(
    'POST',
    `message/sendText/${alice.name}`,
    { number: bob.number, text: 'Hello Bob', delay: 1200 },
    { 'Idempotency-Key': `order-42-${suffix}` },
  );
  const keyId: string = sent.key.id;
  out(`  POST /messenger/message/sendText/${alice.name} → 201 ${sent.status}, key.id ${keyId}`);
  await saw(`${bob.name} messages.upsert`, (e) => e.instance === bob.name && e.event === 'messages.upsert' && e.data.key?.id === keyId);
  await saw(
    `${alice.name} DELIVERY_ACK`,
    (e) => e.instance === alice.name && e.event === 'messages.update' && e.data.keyId === keyId && e.data.status === 'DELIVERY_ACK',
  );

  step(4, 'Bob reads it: Alice gets READ');
  await api('POST', `chat/markMessageAsRead/${bob.name}`, { readMessages: [{ remoteJid: `${alice.number}@s.whatsapp.net`, fromMe: false, id: keyId }] });
  out(`  POST /messenger/chat/markMessageAsRead/${bob.name} → 201`);
  await saw(`${alice.name} READ`, (e) => e.instance === alice.name && e.event === 'messages.update' && e.data.keyId === keyId && e.data.status === 'READ');

  step(5, 'A customer writes to Bob (what a bot receives), simulated with sandbox/inject');
  await api('POST', `sandbox/inject/${bob.name}`, { from: '5511988887777', text: 'hi, is the shop open?' });
  out(`  POST /messenger/sandbox/inject/${bob.name} → 201`);
  await saw(
    `${bob.name} messages.upsert from the customer`,
    (e) => e.instance === bob.name && e.event === 'messages.upsert' && e.data.key?.fromMe === false && /5511988887777/.test(e.data.key?.remoteJid ?? ''),
  );

  step(6, "Alice's webhook deliveries, as the delivery log keeps them");
  const log = await api('GET', `webhook/deliveries/${alice.name}?limit=200`);
  const states = new Map<string, number>();
  for (const delivery of log.deliveries as { status: string }[]) states.set(delivery.status, (states.get(delivery.status) ?? 0) + 1);
  out(`  GET /messenger/webhook/deliveries/${alice.name} → ${[...states].map(([state, n]) => `${n} ${state}`).join(', ')}`);

  step(7, 'Clean up: delete both instances');
  for (const party of [alice, bob]) {
    await api('DELETE', `instance/delete/${party.name}`);
    out(`  DELETE /messenger/instance/delete/${party.name} → 200`);
  }
}

async function main(): Promise<void> {
  const given = process.env.TOUR_API_URL;
  const service = given ? { url: given.replace(/\/+$/, ''), key: process.env.TOUR_API_KEY ?? '', stop: async () => {} } : await startService();
  if (given) {
    if (!service.key) throw new Error('TOUR_API_URL is set: set TOUR_API_KEY to its global API key too');
    out(`Running the tour against ${service.url}`);
    await waitFor('the service answering /health', async () => (await fetch(`${service.url}/health`).catch(() => undefined))?.status === 200, 60_000);
  }
  const receiver = await startReceiver();
  out(`A webhook receiver listens on ${receiver.url}; every event it gets is printed as "← instance event detail".`);
  try {
    await tour(client(service.url, service.key), receiver, Boolean(given));
    out('\nThe tour is done: every step answered as expected.');
  } finally {
    await receiver.close();
    await service.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`\nThe tour stopped: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
