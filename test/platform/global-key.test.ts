// The global API key at start (the real process): a set AUTHENTICATION_API_KEY wins over a key generated before,
// whose file is removed with a log line that never shows a key; a global key under 16 characters is refused at start.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/platform/config.js';
import { resolveGlobalApiKey } from '../../src/platform/util/data-dir.js';
import { storeTargets } from '../support/harness.js';
import { scratchSchema } from '../support/postgres.js';
import { killService, serviceSetup, startService, waitUntilUp } from '../support/service-process.js';

const targets = await storeTargets();
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-global-key-'));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.each(targets)('global key of the started service on $name', (target) => {
  describe.skipIf(!target.available)('global key', () => {
    it('uses AUTHENTICATION_API_KEY once set, removes the key generated before and says so without showing either key', async () => {
      const dir = dataDir();
      let databaseUri = `file:${join(dir, 'switchboard.db')}`;
      if (target.name === 'postgres') {
        const scratch = await scratchSchema();
        cleanups.push(scratch.drop);
        databaseUri = scratch.uri;
      }
      const generated = 'generated-before-0123456789abcdef';
      writeFileSync(join(dir, 'global-api-key'), `${generated}\n`);
      const setup = await serviceSetup(dir, databaseUri, { LOG_LEVEL: 'info' });
      const service = startService(setup.env);
      try {
        await waitUntilUp(setup.base, service);
        expect((await setup.api('GET', 'instance/fetchInstances')).status).toBe(200);
        const withOld = await fetch(`${setup.base}/messenger/instance/fetchInstances`, { headers: { apikey: generated } });
        expect(withOld.status).toBe(401);
        expect(existsSync(join(dir, 'global-api-key'))).toBe(false);
        const output = service.output.join('');
        expect(output).toContain('AUTHENTICATION_API_KEY is set and wins: removed the global key generated before');
        expect(output).not.toContain(generated);
        expect(output).not.toContain(setup.key);
      } finally {
        await killService(service);
      }
    });
  });
});

describe('a weak global key', () => {
  it('is refused at start with how to make a strong one, without a stack trace or the key', async () => {
    const dir = dataDir();
    const setup = await serviceSetup(dir, `file:${join(dir, 'switchboard.db')}`, { AUTHENTICATION_API_KEY: 'abcde' });
    const service = startService(setup.env);
    const code = await Promise.race([service.exited, new Promise((r) => setTimeout(() => r('still running'), 30_000))]);
    await killService(service);
    expect(code).toBe(2);
    const output = service.output.join('');
    expect(output).toContain('AUTHENTICATION_API_KEY must be at least 16 characters (got 5)');
    expect(output).toContain('openssl rand -hex 24');
    expect(output).not.toContain('abcde');
    expect(output).not.toMatch(/\n\s+at /);
    expect(existsSync(join(dir, 'global-api-key'))).toBe(false);
  });

  it('is refused by the configuration from 1 to 15 characters and accepted from 16', () => {
    expect(() => loadConfig({ AUTHENTICATION_API_KEY: 'x'.repeat(15) })).toThrow('AUTHENTICATION_API_KEY must be at least 16 characters (got 15)');
    expect(loadConfig({ AUTHENTICATION_API_KEY: 'x'.repeat(16) }).globalApiKey).toBe('x'.repeat(16));
    expect(loadConfig({}).globalApiKey).toBeUndefined();
  });
});

describe('resolving the global key', () => {
  it('generates a key once and keeps it when none is set; a set key wins and removes the generated file', () => {
    const dir = dataDir();
    const first = resolveGlobalApiKey(dir, undefined);
    expect(first).toMatchObject({ generated: true, staleFileRemoved: false });
    expect(readFileSync(join(dir, 'global-api-key'), 'utf8').trim()).toBe(first.key);
    expect(resolveGlobalApiKey(dir, undefined)).toEqual({ key: first.key, generated: false, staleFileRemoved: false });

    const chosen = 'chosen-key-0123456789';
    expect(resolveGlobalApiKey(dir, chosen)).toEqual({ key: chosen, generated: false, staleFileRemoved: true });
    expect(existsSync(join(dir, 'global-api-key'))).toBe(false);
    expect(resolveGlobalApiKey(dir, chosen)).toEqual({ key: chosen, generated: false, staleFileRemoved: false });
  });
});
