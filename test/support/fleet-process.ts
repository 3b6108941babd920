// A fleet of real service processes on one PostgreSQL schema, started as a user starts them, with load, receivers and checkers.
//
// Each node is `node --import tsx src/main.ts` in its own process group, with the same global key and SECRETS_KEY, its
// own DATA_DIR, SERVER_PORT, NODE_ID and NODE_ADDRESS, and short node leases. Around it: a steady send load bounded in
// time that records the sends each node accepted; a socket.io client on a given node; an ownership sampler; and the
// checks the fleet tests assert (every accepted send delivered exactly once, no event under two webhook ids).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll } from 'vitest';
import { io as connectClient, type Socket as ClientSocket } from 'socket.io-client';
import pg from 'pg';
import { scratchSchema, type ScratchSchema } from './postgres.js';
import { freePort } from './service-process.js';
import type { ReceivedEvent } from './harness.js';
import { sleep, waitFor } from './wait.js';

const root = resolve(import.meta.dirname, '..', '..');

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
type Json = any;

export interface Answer {
  status: number;
  body: Json;
}

/** One node of the fleet: where it listens, what it is started with, and its current process (undefined while down). */
export interface FleetProcessNode {
  index: number;
  nodeId: string;
  port: number;
  base: string;
  dataDir: string;
  env: Record<string, string>;
  process: ChildProcess | undefined;
  /** Everything the node wrote (standard output and error), every life, newest last. */
  output: string[];
  exited: Promise<number | null> | undefined;
  /** How often it was started. */
  lives: number;
}

export interface FleetOptions {
  /** Applied to every node (after the fleet's defaults). */
  env?: Record<string, string>;
  /** A node's own additions (index from 0). */
  envOf?: (index: number) => Record<string, string>;
  /** Whether start() waits for every node's /health (default true). */
  wait?: boolean;
}

/**
 * Lease settings short enough for tests: a heartbeat every 500 ms, dead after 4 s (a node busy starting on a loaded
 * two-core machine missed 2 s and fenced itself off, as it must: too short for a test of takeovers).
 */
export const fleetLeases = { NODE_HEARTBEAT_INTERVAL_MS: '500', NODE_DEAD_AFTER_MS: '4000' };

const living = new Set<ChildProcess>();

// Every node a test file started is killed when the file ends, whatever happened.
afterAll(() => {
  for (const child of [...living]) signalGroup(child, 'SIGKILL');
});

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** A request with a deadline: a node killed mid-request must not hang the test. */
export async function callNode(base: string, key: string, method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<Answer> {
  const full = path.startsWith('/') ? `${base}${path}` : `${base}/messenger/${path}`;
  const response = await fetch(full, {
    method,
    headers: { apikey: key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let parsed: Json = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON (an HTML page): kept as text
  }
  return { status: response.status, body: parsed };
}

export type ProcessFleet = Awaited<ReturnType<typeof startProcessFleet>>;

/** `count` service processes on one fresh PostgreSQL schema; call `close()` at the end (kills them, drops the schema). */
export async function startProcessFleet(count: number, options: FleetOptions = {}) {
  const scratch: ScratchSchema = await scratchSchema();
  const key = `global-${randomBytes(8).toString('hex')}`;
  const secretsKey = randomBytes(32).toString('base64');
  const nodes: FleetProcessNode[] = [];

  const makeNode = async (index: number, extra: Record<string, string> = {}): Promise<FleetProcessNode> => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const dataDir = mkdtempSync(join(tmpdir(), `sb-fleet-${index + 1}-`));
    const nodeId = `fleet-node-${index + 1}`;
    const env: Record<string, string> = {
      AUTHENTICATION_API_KEY: key,
      SECRETS_KEY: secretsKey,
      DATABASE_CONNECTION_URI: scratch.uri,
      DATA_DIR: dataDir,
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      SERVER_URL: base,
      NODE_ID: nodeId,
      NODE_ADDRESS: base,
      LOG_LEVEL: 'warn',
      // The webhook receivers are on loopback.
      OUTBOUND_DENY_PRIVATE: 'false',
      WEBHOOK_RETRY_INITIAL_DELAY_SECONDS: '0.1',
      WEBHOOK_RETRY_MAX_DELAY_SECONDS: '0.5',
      WEBSOCKET_ENABLED: 'true',
      // WhatsApp Web instances must never reach WhatsApp from tests: a closed loopback port instead.
      WA_WEBSOCKET_URL: 'ws://127.0.0.1:9/ws/chat',
      ...fleetLeases,
      ...(options.env ?? {}),
      ...(options.envOf?.(index) ?? {}),
      ...extra,
    };
    return { index, nodeId, port, base, dataDir, env, process: undefined, output: [], exited: undefined, lives: 0 };
  };

  const launch = (node: FleetProcessNode): void => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: { ...process.env, ...node.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    living.add(child);
    node.lives += 1;
    node.output.push(`--- ${node.nodeId} life ${node.lives} (pid ${child.pid}) ---\n`);
    child.stdout?.on('data', (d: Buffer) => node.output.push(d.toString()));
    child.stderr?.on('data', (d: Buffer) => node.output.push(d.toString()));
    node.exited = new Promise<number | null>((done) =>
      child.on('exit', (code, signal) => {
        living.delete(child);
        node.output.push(`--- ${node.nodeId} exited (code ${code}, signal ${signal}) ---\n`);
        done(code);
      }),
    );
    node.process = child;
  };

  const isUp = (node: FleetProcessNode) => node.process !== undefined && node.process.exitCode === null && node.process.signalCode === null;

  const waitUp = async (node: FleetProcessNode, timeoutMs = 90_000) => {
    await waitFor(
      async () => {
        if (!isUp(node)) throw new Error(`${node.nodeId} exited while starting:\n${tail(node)}`);
        const res = await fetch(`${node.base}/health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
        return res?.status === 200;
      },
      timeoutMs,
      { intervalMs: 100, what: () => `${node.nodeId} up at ${node.base}:\n${tail(node)}\n` },
    );
  };

  for (let i = 0; i < count; i++) nodes.push(await makeNode(i));
  for (const node of nodes) launch(node);
  if (options.wait !== false) await Promise.all(nodes.map((node) => waitUp(node)));

  const fleet = {
    nodes,
    key,
    secretsKey,
    schema: scratch.schema,
    uri: scratch.uri,
    /** A request to node `i` (path under /messenger/ unless it starts with `/`). */
    api: (i: number, method: string, path: string, body?: unknown, timeoutMs?: number) => callNode(nodes[i].base, key, method, path, body, timeoutMs),
    isUp: (i: number) => isUp(nodes[i]),
    /** Indexes of the nodes whose process runs. */
    up: () => nodes.filter(isUp).map((node) => node.index),
    /** Sends `signal` (SIGKILL: the whole process group at once; SIGTERM: the service alone) and waits for the exit. */
    async kill(i: number, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL', timeoutMs = 20_000): Promise<number | null> {
      const node = nodes[i];
      const child = node.process;
      if (!child || !isUp(node)) return child?.exitCode ?? null;
      if (signal === 'SIGKILL') signalGroup(child, 'SIGKILL');
      else child.kill('SIGTERM');
      const code = await Promise.race([node.exited, sleep(timeoutMs).then(() => 'timeout' as const)]);
      if (code === 'timeout') {
        signalGroup(child, 'SIGKILL');
        throw new Error(`${node.nodeId} did not exit within ${timeoutMs} ms of ${signal}:\n${tail(node)}`);
      }
      return code ?? null;
    },
    /** Starts node `i` again with the same settings (same port, NODE_ID and data folder) and waits until it is up. */
    async restart(i: number, wait = true): Promise<void> {
      const node = nodes[i];
      if (isUp(node)) throw new Error(`${node.nodeId} is still running; kill it first`);
      launch(node);
      if (wait) await waitUp(node);
    },
    waitUp: (i: number, timeoutMs?: number) => waitUp(nodes[i], timeoutMs),
    /** Adds a node with the fleet's settings (and `extra`), started and up. */
    async addNode(extra: Record<string, string> = {}): Promise<number> {
      const node = await makeNode(nodes.length, extra);
      nodes.push(node);
      launch(node);
      await waitUp(node);
      return node.index;
    },
    /** What node `i` answers at GET /messenger/cluster. */
    async cluster(i: number): Promise<Json> {
      const answer = await callNode(nodes[i].base, key, 'GET', 'cluster', undefined, 5000);
      if (answer.status !== 200) throw new Error(`${nodes[i].nodeId} GET /messenger/cluster: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body;
    },
    /** One statement on the fleet's schema (a check reading the store from outside, as an operator would). */
    query: <T = Record<string, unknown>>(sql: string, params: unknown[] = []) => queryOn<T>(scratch.uri, sql, params),
    /** The last lines every node wrote (for failure messages). */
    logs: () => nodes.map(tail).join('\n'),
    async close(): Promise<void> {
      for (const node of nodes) if (node.process) signalGroup(node.process, 'SIGKILL');
      await Promise.all(nodes.map((node) => (node.exited ? Promise.race([node.exited, sleep(5000)]) : undefined)));
      for (const node of nodes) rmSync(node.dataDir, { recursive: true, force: true });
      await scratch.drop();
    },
  };
  return fleet;
}

/** One statement on a connection of its own to `uri` (the fleet's schema as its search path). */
async function queryOn<T>(uri: string, sql: string, params: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

function tail(node: FleetProcessNode, chars = 3000): string {
  const text = node.output.join('');
  return `[${node.nodeId}] ${text.length > chars ? `…${text.slice(-chars)}` : text}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Sandbox instances

export interface LinkedInstance {
  name: string;
  id: string;
  /** The linked number's JID (the `remoteJid` its messages carry at the other end). */
  owner: string;
  number: string;
}

/** Creates a SANDBOX instance through node `i` and links it with `number` (QR code, then sandbox/scan). */
export async function linkSandboxOn(fleet: ProcessFleet, i: number, name: string, number: string): Promise<LinkedInstance> {
  const created = await fleet.api(i, 'POST', 'instance/create', { instanceName: name, integration: 'SANDBOX', qrcode: true });
  if (created.status !== 201) throw new Error(`create ${name} on node ${i + 1}: ${created.status} ${JSON.stringify(created.body)}`);
  const code = created.body?.qrcode?.code;
  if (typeof code !== 'string') throw new Error(`create ${name} on node ${i + 1} answered no QR code: ${JSON.stringify(created.body)}\n${fleet.logs()}`);
  const scan = await fleet.api(i, 'POST', 'sandbox/scan', { code, number });
  if (scan.status !== 200) throw new Error(`scan ${name} on node ${i + 1}: ${scan.status} ${JSON.stringify(scan.body)}`);
  return { name, id: created.body.instance.instanceId as string, owner: scan.body.instance.owner as string, number };
}

/** Sets the webhook of `instance` (through node `i`) to the receiver, for `events`. */
export async function hookTo(fleet: ProcessFleet, i: number, instance: string, receiver: { url: string }, events: string[]): Promise<void> {
  const set = await fleet.api(i, 'POST', `webhook/set/${instance}`, { webhook: { enabled: true, url: `${receiver.url}/hook`, events } });
  if (set.status !== 201) throw new Error(`webhook/set/${instance} on node ${i + 1}: ${set.status} ${JSON.stringify(set.body)}`);
}

/** The connection state node `i` answers for `instance` (`open`, `connecting`, `close`), or `HTTP <status>`. */
export async function connectionState(fleet: ProcessFleet, i: number, instance: string): Promise<string> {
  const answer = await fleet
    .api(i, 'GET', `instance/connectionState/${instance}`, undefined, 5000)
    .catch((error: Error) => ({ status: 0, body: error.message }));
  if (answer.status !== 200) return `HTTP ${answer.status}`;
  return String(answer.body?.instance?.state ?? answer.body?.state ?? JSON.stringify(answer.body));
}

// ---------------------------------------------------------------------------------------------------------------
// A webhook receiver that can hold its answers

/**
 * A webhook receiver on loopback. While held, it keeps every request open unanswered (the sending node's delivery
 * stays claimed and in flight); `release()` answers the held ones still connected and every later one at once. Only
 * answered requests are recorded: a request from a node that died meanwhile is not a delivery.
 */
export async function startHoldingReceiver() {
  const events: ReceivedEvent[] = [];
  const held: { event: ReceivedEvent; res: ServerResponse }[] = [];
  let holding = false;
  let received = 0;
  const answer = (event: ReceivedEvent, res: ServerResponse) => {
    if (res.destroyed || res.socket?.destroyed) return;
    res.writeHead(200).end();
    events.push(event);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      received += 1;
      const event = { path: req.url ?? '/', headers: req.headers, body: raw ? JSON.parse(raw) : null };
      if (holding) held.push({ event, res });
      else answer(event, res);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    events,
    /** Requests that arrived, answered or not. */
    received: () => received,
    /** Requests held open right now. */
    heldCount: () => held.length,
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const { event, res } of held.splice(0)) answer(event, res);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Load: steady sends, spread over the running nodes, bounded in time

export interface SendPair {
  /** The sending instance's name. */
  from: string;
  /** The number it sends to (another sandbox instance's linked number). */
  to: string;
}

export interface AcceptedSend {
  /** The unique text of the send: how its delivery is recognised at the other end. */
  text: string;
  id: string;
  pair: SendPair;
  node: number;
  at: number;
}

interface LoadReport {
  accepted: AcceptedSend[];
  /** Sends a node refused with an HTTP status (status → count). */
  refused: Record<string, number>;
  /** Sends that got no answer (the node was down, or died mid-request): not accepted, may or may not be delivered. */
  unanswered: number;
  startedAt: number;
  endedAt: number;
}

export interface LoadOptions {
  pairs: SendPair[];
  perSecond: number;
  durationMs: number;
  /** Which nodes take sends (default: every node running at the moment of the send). */
  nodes?: () => number[];
  /** A tag in every text (tells runs apart). */
  tag?: string;
}

/**
 * Sends `perSecond` texts (round robin over the pairs and the running nodes) for `durationMs`, then stops by itself;
 * `done` resolves with every send a node answered 201 (accepted), and what was refused or unanswered.
 */
export function sendLoad(fleet: ProcessFleet, options: LoadOptions) {
  const report: LoadReport = { accepted: [], refused: {}, unanswered: 0, startedAt: Date.now(), endedAt: 0 };
  const tag = options.tag ?? randomBytes(3).toString('hex');
  let stopped = false;
  const inFlight = new Set<Promise<void>>();
  const sendOne = async (seq: number) => {
    const candidates = (options.nodes ?? fleet.up)();
    if (candidates.length === 0) {
      report.unanswered += 1;
      return;
    }
    const node = candidates[seq % candidates.length];
    const pair = options.pairs[seq % options.pairs.length];
    const text = `load ${tag} #${seq}`;
    try {
      const answer = await fleet.api(node, 'POST', `message/sendText/${pair.from}`, { number: pair.to, text }, 10_000);
      if (answer.status === 201) report.accepted.push({ text, id: String(answer.body?.key?.id), pair, node, at: Date.now() });
      else report.refused[answer.status] = (report.refused[answer.status] ?? 0) + 1;
    } catch {
      report.unanswered += 1;
    }
  };
  const done = (async () => {
    const gapMs = 1000 / options.perSecond;
    const end = report.startedAt + options.durationMs;
    for (let seq = 0; !stopped && Date.now() < end; seq++) {
      const sending = sendOne(seq);
      inFlight.add(sending);
      void sending.finally(() => inFlight.delete(sending));
      // Open loop: the next send leaves on schedule whether or not the earlier ones were answered.
      const nextAt = report.startedAt + (seq + 1) * gapMs;
      await sleep(Math.max(0, nextAt - Date.now()));
    }
    await Promise.all([...inFlight]);
    report.endedAt = Date.now();
    return report;
  })();
  return {
    report,
    done,
    stop() {
      stopped = true;
      return done;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// A socket.io client on one node

interface SocketRecord {
  event: string;
  /** The envelope as socket.io delivers it: `{ event, instance, data, … }` (the event's own data under `data`). */
  data: Json;
  at: number;
}

/** A socket.io client on node `i`, in the namespace of `instance` (global key), recording every event it gets. */
export async function attachSocket(fleet: ProcessFleet, i: number, instance: string, transports: ('websocket' | 'polling')[] = ['websocket']) {
  const events: SocketRecord[] = [];
  const socket: ClientSocket = connectClient(`${fleet.nodes[i].base}/${instance}`, {
    auth: { apikey: fleet.key },
    transports,
    reconnection: false,
  });
  socket.onAny((event: string, data: Json) => events.push({ event, data, at: Date.now() }));
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`socket.io on node ${i + 1} /${instance}: not connected within 10 s`)), 10_000);
    socket.once('connect', () => {
      clearTimeout(timer);
      done();
    });
    socket.once('connect_error', (error: Error) => {
      clearTimeout(timer);
      fail(new Error(`socket.io on node ${i + 1} /${instance}: ${error.message}`));
    });
  });
  return {
    events,
    connected: () => socket.connected,
    close: (): void => {
      socket.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Checks

/** The text of a messages.upsert / send.message event (webhook body or socket payload `data`). */
export function textOf(data: Json): string | undefined {
  const message = data?.message;
  return message?.conversation ?? message?.extendedTextMessage?.text ?? undefined;
}

/** What one event is about, independent of how it was delivered: the same event delivered twice has the same key. */
function eventKey(body: Json): string | undefined {
  const keyId = body?.data?.key?.id;
  if (typeof keyId !== 'string') return undefined;
  if (body.event === 'messages.upsert' || body.event === 'send.message') return `${body.instance}:${body.event}:${keyId}`;
  if (body.event === 'messages.update') return `${body.instance}:${body.event}:${keyId}:${body.data?.status}`;
  return undefined;
}

export interface DeliveryProblems {
  /** Accepted sends whose text never arrived at the recipient's webhook. */
  missing: string[];
  /** Texts that arrived at the recipient as more than one event (different envelope ids): delivered more than once. */
  duplicated: string[];
}

/**
 * Every accepted send arrived at its recipient's webhook (as `messages.upsert`) exactly once: copies of one event
 * (same envelope id, a retried delivery) count once; the same text under two envelope ids is a second delivery.
 */
export function deliveryProblems(receiver: { events: ReceivedEvent[] }, accepted: AcceptedSend[], recipientOf: (pair: SendPair) => string): DeliveryProblems {
  const idsByText = new Map<string, Set<string>>();
  for (const event of receiver.events) {
    if (event.body?.event !== 'messages.upsert' || event.body?.data?.key?.fromMe) continue;
    const text = textOf(event.body.data);
    if (text === undefined) continue;
    const key = `${event.body.instance}|${text}`;
    const ids = idsByText.get(key) ?? new Set<string>();
    ids.add(String(event.body.id));
    idsByText.set(key, ids);
  }
  const missing: string[] = [];
  const duplicated: string[] = [];
  for (const send of accepted) {
    const ids = idsByText.get(`${recipientOf(send.pair)}|${send.text}`);
    if (!ids) missing.push(`${send.text} (${send.pair.from} → ${recipientOf(send.pair)}, accepted by node ${send.node + 1})`);
    else if (ids.size > 1) duplicated.push(`${send.text} under envelope ids ${[...ids].join(', ')}`);
  }
  for (const [key, ids] of idsByText)
    if (ids.size > 1 && !duplicated.some((line) => line.startsWith(key.split('|')[1]))) duplicated.push(`${key} under ${[...ids].join(', ')}`);
  return { missing, duplicated };
}

/** Events (by what they are about) that reached the webhook under two different envelope ids. */
export function eventsUnderTwoIds(events: ReceivedEvent[]): string[] {
  const ids = new Map<string, Set<string>>();
  for (const event of events) {
    const key = eventKey(event.body);
    if (!key) continue;
    const set = ids.get(key) ?? new Set<string>();
    set.add(String(event.body.id));
    ids.set(key, set);
  }
  return [...ids].filter(([, set]) => set.size > 1).map(([key, set]) => `${key}: ${[...set].join(', ')}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Ownership sampling

interface OwnerRow {
  instance_id: string;
  owner: string | null;
  generation: string | number;
  node_id: string | null;
  heartbeat_at: string | number | null;
  stopped_at: string | number | null;
}

export interface OwnershipReport {
  samples: number;
  clusterSamples: number;
  /** Every breach seen, each once, with when (ms after the sampler started). */
  violations: string[];
  /** The last owner seen of each instance id (incarnation or null), and its generation. */
  last: Map<string, { owner: string | null; generation: number }>;
}

/**
 * Reads `instance_owners` joined with `nodes` every `intervalMs` until stopped, and asks each running node for
 * GET /messenger/cluster every `clusterEveryMs`. A breach: an owner that changed without a higher generation (two
 * owners under one lease), a generation that went down, an owner unknown to `nodes`, or the running nodes together
 * counting more instances as theirs than there are (read from each node's own entry: `instances`, `ownedInstances`
 * or `owns`, whichever the cluster answer carries).
 */
export function sampleOwnership(fleet: ProcessFleet, { intervalMs = 100, clusterEveryMs = 500 } = {}) {
  const report: OwnershipReport = { samples: 0, clusterSamples: 0, violations: [], last: new Map() };
  const startedAt = Date.now();
  const seen = new Set<string>();
  const breach = (what: string) => {
    if (seen.has(what)) return;
    seen.add(what);
    report.violations.push(`+${Date.now() - startedAt} ms: ${what}`);
  };
  let stopped = false;
  const ownersLoop = (async () => {
    while (!stopped) {
      const rows = await fleet
        .query<OwnerRow>(
          'select o.instance_id, o.owner, o.generation, n.node_id, n.heartbeat_at, n.stopped_at from instance_owners o left join nodes n on n.incarnation = o.owner',
        )
        .catch(() => [] as OwnerRow[]);
      report.samples += 1;
      for (const row of rows) {
        const generation = Number(row.generation);
        const before = report.last.get(row.instance_id);
        if (before) {
          if (generation < before.generation) breach(`instance ${row.instance_id}: generation went down from ${before.generation} to ${generation}`);
          if (generation === before.generation && row.owner !== before.owner && before.owner !== null && row.owner !== null)
            breach(`instance ${row.instance_id}: owner changed from ${before.owner} to ${row.owner} under the same generation ${generation}`);
        }
        report.last.set(row.instance_id, { owner: row.owner, generation });
        // An owner the store knows nothing about, or one long stopped, holding on: noted (the others take over its instances).
        if (row.owner !== null && row.node_id === null) breach(`instance ${row.instance_id}: owned by ${row.owner}, an incarnation not in nodes`);
      }
      await sleep(intervalMs);
    }
  })();
  const clusterLoop = (async () => {
    while (!stopped) {
      const answers = await Promise.all(
        fleet.up().map((i) =>
          fleet.cluster(i).then(
            (body) => ({ i, body }),
            () => undefined,
          ),
        ),
      );
      report.clusterSamples += 1;
      // Each node's own count of the instances it owns (the field other parts add): a sum above the instances is a breach.
      const owned = answers.flatMap((answer) => {
        const self = answer?.body?.nodes?.find?.((node: Json) => node.self);
        const count = self?.instances ?? self?.ownedInstances ?? self?.owns;
        return typeof count === 'number' ? [count] : [];
      });
      const total = report.last.size;
      const sum = owned.reduce((a, b) => a + b, 0);
      if (total > 0 && owned.length === answers.length && sum > total) breach(`the nodes together claim ${sum} instances of ${total}`);
      await sleep(clusterEveryMs);
    }
  })();
  return {
    report,
    async stop(): Promise<OwnershipReport> {
      stopped = true;
      await Promise.all([ownersLoop, clusterLoop]);
      return report;
    },
  };
}

/** Node `i`'s incarnation (what it writes as owner and claimant). */
export async function incarnationOf(fleet: ProcessFleet, i: number): Promise<string> {
  return String((await fleet.cluster(i)).self.incarnation);
}

/** Which node (index) owns each instance id right now, by `instance_owners` and the owners' NODE_ID (-1: none). */
export async function ownersNow(fleet: ProcessFleet): Promise<Map<string, number>> {
  const rows = await fleet.query<{ instance_id: string; node_id: string | null }>(
    'select o.instance_id, n.node_id from instance_owners o left join nodes n on n.incarnation = o.owner and n.stopped_at is null',
  );
  const indexOf = new Map(fleet.nodes.map((node) => [node.nodeId, node.index]));
  return new Map(rows.map((row) => [row.instance_id, row.node_id === null ? -1 : (indexOf.get(row.node_id) ?? -1)]));
}

/**
 * Waits until every instance is owned by one of `nodes` (by `instance_owners`) and each of `nodes` answers it `open`;
 * answers how long that took. The failure names every instance that is not there yet, and the nodes' last lines.
 */
export async function waitAllOpen(fleet: ProcessFleet, instances: LinkedInstance[], nodes: number[], timeoutMs: number): Promise<number> {
  const startedAt = Date.now();
  let lagging: string[] = [];
  await waitFor(
    async () => {
      const owners = await ownersNow(fleet);
      lagging = [];
      for (const instance of instances) {
        const owner = owners.get(instance.id);
        if (owner === undefined || !nodes.includes(owner))
          lagging.push(`${instance.name}: owned by node ${owner === undefined || owner < 0 ? 'none' : owner + 1}`);
      }
      if (lagging.length > 0) return false;
      for (const instance of instances) {
        for (const i of nodes) {
          const state = await connectionState(fleet, i, instance.name);
          if (state !== 'open') lagging.push(`${instance.name}: node ${i + 1} answers ${state}`);
        }
      }
      return lagging.length === 0;
    },
    timeoutMs,
    { intervalMs: 200, what: () => `every instance open on nodes ${nodes.map((i) => i + 1).join(', ')} (not yet: ${lagging.join('; ')})\n${fleet.logs()}` },
  );
  return Date.now() - startedAt;
}
