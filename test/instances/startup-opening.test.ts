// A node started with hundreds of linked instances answers GET /health at once and opens them in the background: the
// health answer tells how many are still waiting, then every one is `open`; a SIGTERM while they open stops it cleanly.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pgQuery, postgresAvailable, scratchSchema } from '../support/postgres.js';
import { copySandboxInstance } from '../support/sandbox-copies.js';
import { linkSandbox, serviceSetup, startService, waitUntilUp, type Service } from '../support/service-process.js';
import { waitFor } from '../support/wait.js';

const available = await postgresAvailable('a node restarted with many instances (PostgreSQL)');
const copies = 300;

interface Health {
  status: string;
  instances?: { owned: number; opening: number };
}

/** Polls GET /health every few milliseconds from the process start: the first 200 answer's body. */
async function firstHealth(base: string, service: Service): Promise<Health> {
  let body: Health | undefined;
  await waitFor(
    async () => {
      if (service.child.exitCode !== null) throw new Error(`service exited early:\n${service.output.join('')}`);
      const res = await fetch(`${base}/health`).catch(() => undefined);
      if (res?.status === 200) body = (await res.json()) as Health;
      return body !== undefined;
    },
    90_000,
    { intervalMs: 10, what: () => `service up:\n${service.output.join('')}\n` },
  );
  return body as Health;
}

async function sigterm(service: Service): Promise<number | null> {
  // To tsx alone, which relays it to the service and exits with its code.
  service.child.kill('SIGTERM');
  return Promise.race([service.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 20_000))]).then((code) => {
    if (code === 'late') throw new Error(`no exit within 20 s of SIGTERM:\n${service.output.join('')}`);
    return code;
  });
}

describe.skipIf(!available)('a node restarted with hundreds of linked sandbox instances (PostgreSQL)', () => {
  it('answers /health before they are open, tells how many are opening, then has every one open; a SIGTERM meanwhile stops it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-opening-'));
    const scratch = await scratchSchema();
    const secretsKey = randomBytes(32).toString('base64');
    // One at a time: opening hundreds takes long enough to be seen from outside.
    const { base, env, api } = await serviceSetup(join(dir, 'data'), scratch.uri, {
      SECRETS_KEY: secretsKey,
      INSTANCE_START_CONCURRENCY: '1',
      INSTANCE_QUICK_START_CONCURRENCY: '1',
    });
    let service = startService(env);
    try {
      await waitUntilUp(base, service);
      const template = await linkSandbox(api, 'opening-template', '4917100000001');
      expect(await sigterm(service)).toBe(0);
      const run = (sql: string, params?: unknown[]) => pgQuery(sql, params);
      await copySandboxInstance(run, {
        templateId: template.id,
        templateNumber: '4917100000001',
        prefix: 'opening-',
        numberPrefix: '49172',
        count: copies,
        secretsKey,
        schema: `${scratch.schema}.`,
      });

      service = startService(env);
      const first = await firstHealth(base, service);
      expect(first.status).toBe('ok');
      expect(first.instances?.owned).toBe(copies + 1);
      expect(first.instances?.opening).toBeGreaterThan(0);
      // While they open, the API answers, and an instance not reached yet says so truthfully: connecting, not open.
      const listedEarly = await api('GET', 'instance/fetchInstances');
      expect(listedEarly.status).toBe(200);
      const early = (listedEarly.body as { instance: { status: string } }[]).map((entry) => entry.instance.status);
      expect(early).toHaveLength(copies + 1);
      expect(early).toContain('connecting');
      expect(early.filter((state) => state !== 'open' && state !== 'connecting')).toEqual([]);

      await waitFor(
        async () => {
          const health = (await (await fetch(`${base}/health`)).json()) as Health;
          return health.instances?.opening === 0;
        },
        120_000,
        { intervalMs: 200, what: 'every owned instance started' },
      );
      const listed = await api('GET', 'instance/fetchInstances');
      const states = (listed.body as { instance: { status: string } }[]).map((entry) => entry.instance.status);
      expect(states).toHaveLength(copies + 1);
      expect(states.filter((state) => state === 'open')).toHaveLength(copies + 1);
      const one = await api('GET', `instance/connectionState/opening-${copies - 1}`);
      expect(one.body.instance.state).toBe('open');
      expect(await sigterm(service)).toBe(0);

      // Started again and stopped while it opens: it exits cleanly, and what it owned is free for the next node.
      service = startService(env);
      const again = await firstHealth(base, service);
      expect(again.instances?.opening).toBeGreaterThan(0);
      expect(await sigterm(service)).toBe(0);
      const owned = await pgQuery<{ n: string }>(`select count(*) as n from ${scratch.schema}.instance_owners where owner is not null`);
      expect(Number(owned[0].n)).toBe(0);
    } finally {
      if (service.child.exitCode === null && service.child.pid !== undefined) process.kill(-service.child.pid, 'SIGKILL');
      await service.exited;
      await scratch.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
