// The real service as a child process for crash tests: start it in its own process group, wait for it, SIGKILL it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, expect } from 'vitest';
import { waitFor } from './wait.js';

const root = resolve(import.meta.dirname, '..', '..');
const tsxBin = join(root, 'node_modules', '.bin', 'tsx');

/** A loopback port nothing listens on right now (listen on 0, learn the port, close). */
/** Ports already handed out by this process: the system may offer a port again once it is released. */
const handedOut = new Set<number>();

/** A loopback port free now and not handed out before (two picked before either listens never collide). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    await new Promise<void>((r) => server.close(() => r()));
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free loopback port found that was not handed out already');
}

export interface Service {
  child: ChildProcess;
  output: string[];
  /** What the service wrote to standard error alone (start-up failures are asserted on it). */
  errors: string[];
  exited: Promise<number | null>;
}

const children = new Set<ChildProcess>();

/** Starts `tsx src/main.ts` in its own process group (tsx runs the service in a child of its own). */
export function startService(env: Record<string, string>): Service {
  const child = spawn(tsxBin, ['src/main.ts'], {
    cwd: root,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const output: string[] = [];
  const errors: string[] = [];
  child.stdout?.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => {
    output.push(d.toString());
    errors.push(d.toString());
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  void exited.then(() => children.delete(child));
  return { child, output, errors, exited };
}

/** SIGKILL to the whole process group of a service we started: the wrapper and the service die at once. */
export async function killService(service: Service): Promise<void> {
  const pid = service.child.pid;
  if (pid === undefined || service.child.exitCode !== null || service.child.signalCode !== null) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
  await Promise.race([service.exited, new Promise((r) => setTimeout(r, 5000))]);
}

// Every service a test file started is killed when the file ends.
afterAll(async () => {
  for (const child of [...children]) {
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
});

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
type Json = any;

function client(base: string, key: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> => {
    const response = await fetch(`${base}/messenger/${path}`, {
      method,
      headers: { apikey: key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
}

export async function waitUntilUp(base: string, service: Service, timeoutMs = 90_000): Promise<void> {
  await waitFor(
    async () => {
      if (service.child.exitCode !== null) throw new Error(`service exited early:\n${service.output.join('')}`);
      const res = await fetch(`${base}/health`).catch(() => undefined); // not listening yet
      return res?.status === 200;
    },
    timeoutMs,
    { intervalMs: 100, what: () => `service up:\n${service.output.join('')}\n` },
  );
}

export type Api = ReturnType<typeof client>;

/** Where a crash test's service listens, its key, and the environment it starts with (`extra` added). */
export async function serviceSetup(dataDir: string, databaseUri: string, extra: Record<string, string> = {}) {
  const key = `global-${randomBytes(8).toString('hex')}`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    AUTHENTICATION_API_KEY: key,
    SERVER_PORT: String(port),
    SERVER_HOST: '127.0.0.1',
    SERVER_URL: base,
    DATA_DIR: dataDir,
    DATABASE_CONNECTION_URI: databaseUri,
    LOG_LEVEL: 'warn',
    ...extra,
  };
  return { key, base, env, api: client(base, key) };
}

/** Creates a SANDBOX instance through the API and links it with `number` (QR code, then sandbox/scan). */
export async function linkSandbox(api: Api, name: string, number: string) {
  const created = await api('POST', 'instance/create', { instanceName: name, integration: 'SANDBOX', qrcode: true });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const scan = await api('POST', 'sandbox/scan', { code: created.body.qrcode.code, number });
  expect(scan.status, JSON.stringify(scan.body)).toBe(200);
  return { name, id: created.body.instance.instanceId as string, owner: scan.body.instance.owner as string };
}
