// Rate limiting over HTTP: each instance key has its budget, the global key is unlimited unless told, requests without a valid key are counted by address, public routes never.
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, storeTargets, type TestApp } from '../../support/harness.js';
import { waitFor } from '../../support/wait.js';

// No store is involved in rate limiting: one store is enough.
const [sqlite] = await storeTargets();

/** Creates an unlinked SANDBOX instance with the global key; answers its key. */
async function instanceKey(t: TestApp, name: string): Promise<string> {
  const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
  expect(created.status).toBe(201);
  return created.body.hash.apikey as string;
}

const stateOf = (t: TestApp, name: string, key: string | null) => t.api('GET', `instance/connectionState/${name}`, { key });

/** Asserts a 429 in Evolution's envelope with Retry-After within the window, naming whose budget ran out. */
function expectTooMany(answer: Awaited<ReturnType<TestApp['api']>>, caller: string, windowSeconds: number) {
  expect(answer.status).toBe(429);
  expect(answer.body).toMatchObject({ status: 429, error: 'Too Many Requests' });
  expect(answer.body.response.message).toHaveLength(1);
  expect(answer.body.response.message[0]).toMatch(new RegExp(`^too many requests for ${caller}: .*; retry in \\d+ seconds$`));
  const retryAfter = Number(answer.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(answer.headers.get('x-ratelimit-remaining')).toBe('0');
}

describe('rate limiting', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('answers 429 with Retry-After to an instance key past its budget; other instance keys and the global key go on', async () => {
    t = await startApp(sqlite, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' });
    const keyA = await instanceKey(t, 'rl-a');
    const keyB = await instanceKey(t, 'rl-b');
    for (const remaining of [2, 1, 0]) {
      const answer = await stateOf(t, 'rl-a', keyA);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-ratelimit-limit')).toBe('3');
      expect(answer.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
      expect(Number(answer.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    }
    const over = await stateOf(t, 'rl-a', keyA);
    expectTooMany(over, 'this instance key', 60);
    expect(over.body.response.message[0]).toContain('at most 3 per 60 seconds');
    // A send is refused the same way.
    expectTooMany(await t.api('POST', 'message/sendText/rl-a', { key: keyA, body: { number: '5511900000001', text: 'hi' } }), 'this instance key', 60);

    expect((await stateOf(t, 'rl-b', keyB)).status).toBe(200);
    // The global key is unlimited by default, on the instance whose key ran out as on any other route, and carries no budget headers.
    for (let i = 0; i < 10; i++) {
      const answer = await stateOf(t, 'rl-a', t.globalKey);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-ratelimit-limit')).toBeNull();
    }
    expect((await t.api('GET', 'instance/fetchInstances')).status).toBe(200);
  });

  it('limits the global key when RATE_LIMIT_GLOBAL_KEY_MAX is set', async () => {
    t = await startApp(sqlite, { RATE_LIMIT_GLOBAL_KEY_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' });
    expect((await t.api('GET', 'instance/fetchInstances')).status).toBe(200);
    expect((await t.api('GET', 'instance/fetchInstances')).status).toBe(200);
    const over = await t.api('GET', 'instance/fetchInstances');
    expectTooMany(over, 'the global key', 60);
  });

  it('counts requests without a valid key by client address, and never limits /health', async () => {
    t = await startApp(sqlite, { RATE_LIMIT_UNAUTHENTICATED_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000', METRICS_ENABLED: 'true' });
    const key = await instanceKey(t, 'rl-c');
    expect((await stateOf(t, 'rl-c', 'a-wrong-key-0000')).status).toBe(401);
    expect((await stateOf(t, 'rl-c', null)).status).toBe(401);
    expect((await t.api('GET', 'instance/fetchInstances', { key: 'another-wrong-key' })).status).toBe(401);
    // Past the address's budget, whatever wrong key or none it tries.
    expectTooMany(await stateOf(t, 'rl-c', 'a-wrong-key-0001'), 'requests without a valid API key from this address', 60);
    expectTooMany(await stateOf(t, 'rl-c', null), 'requests without a valid API key from this address', 60);
    // Valid keys from the same address have budgets of their own.
    expect((await stateOf(t, 'rl-c', key)).status).toBe(200);
    expect((await stateOf(t, 'rl-c', t.globalKey)).status).toBe(200);
    // Public routes are never limited.
    for (let i = 0; i < 10; i++) {
      expect((await t.api('GET', '/health', { key: null })).status).toBe(200);
      expect((await t.api('GET', '/health', { key: 'a-wrong-key-0002' })).status).toBe(200);
      expect((await t.api('GET', '/metrics', { key: null })).status).toBe(200);
    }
    expect((await t.api('GET', '/', { key: null })).status).toBe(200);
  });

  it('starts a budget over when its window ends', async () => {
    t = await startApp(sqlite, { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '400' });
    const key = await instanceKey(t, 'rl-d');
    expect((await stateOf(t, 'rl-d', key)).status).toBe(200);
    expect((await stateOf(t, 'rl-d', key)).status).toBe(200);
    expectTooMany(await stateOf(t, 'rl-d', key), 'this instance key', 1);
    const again = await waitFor(
      async () => {
        const answer = await stateOf(t as TestApp, 'rl-d', key);
        return answer.status === 200 ? answer : undefined;
      },
      3000,
      { intervalMs: 100, what: 'a 200 after the window' },
    );
    expect(again.headers.get('x-ratelimit-remaining')).toBe('1');
  });

  it('documents the 429 on every route that needs a key, not on public ones', async () => {
    t = await startApp(sqlite);
    const doc = await t.api('GET', 'docs/json');
    expect(doc.status).toBe(200);
    const keyed = doc.body.paths['/messenger/message/sendText/{instance}'].post.responses;
    expect(keyed['429'].description).toContain('Retry-After');
    expect(Object.keys(keyed['429'].content['application/json'].schema.properties)).toEqual(['status', 'error', 'response']);
    expect(Object.keys(doc.body.paths['/messenger/sandbox/media/{file}'].get.responses)).not.toContain('429');
  });

  it('limits nothing when RATE_LIMIT_ENABLED is false', async () => {
    t = await startApp(sqlite, { RATE_LIMIT_ENABLED: 'false', RATE_LIMIT_MAX: '1', RATE_LIMIT_UNAUTHENTICATED_MAX: '1' });
    const key = await instanceKey(t, 'rl-e');
    for (let i = 0; i < 5; i++) {
      const answer = await stateOf(t, 'rl-e', key);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-ratelimit-limit')).toBeNull();
      expect((await stateOf(t, 'rl-e', 'a-wrong-key-0003')).status).toBe(401);
    }
  });
});
