// Every answer names its request in x-request-id (a client's sane id, else a new one), and the request's log lines carry it.
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, storeTargets, type TestApp } from '../../support/harness.js';
import { capturedLogger } from '../../support/captured-logger.js';

const targets = await storeTargets();
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.each(targets)('request ids on $name', (target) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('answers a new id on success and on every kind of error, each request its own', async () => {
    t = await startApp(target);
    const ok = await t.api('GET', 'instance/fetchInstances');
    expect(ok.status).toBe(200);
    const unauthorized = await t.api('GET', 'instance/fetchInstances', { key: 'wrong-key-0123456789' });
    expect(unauthorized.status).toBe(401);
    const invalid = await t.api('POST', 'instance/create', { body: { instanceName: '' } });
    expect(invalid.status).toBe(400);
    const missing = await t.api('GET', '/no-such-route');
    expect(missing.status).toBe(404);
    const badPath = await t.api('GET', 'instance/connectionState/%zz');
    expect(badPath.status).toBe(400);
    const answers = [ok, unauthorized, invalid, missing, badPath];
    // Error answers keep Evolution's envelope.
    for (const answer of answers.slice(1)) expect(answer.body).toMatchObject({ status: answer.status, response: { message: expect.any(Array) } });
    const ids = answers.map((answer) => answer.headers.get('x-request-id'));
    expect(ids).toEqual(ids.map(() => expect.stringMatching(uuid)));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("echoes a client's sane id, on success and on errors", async () => {
    t = await startApp(target);
    const id = 'trace-4f2a:client/7=ok';
    const ok = await t.api('GET', 'instance/fetchInstances', { headers: { 'x-request-id': id } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toBe(id);
    const missing = await t.api('GET', '/no-such-route', { headers: { 'x-request-id': id } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-request-id')).toBe(id);
    const unauthorized = await t.api('GET', 'instance/fetchInstances', { key: null, headers: { 'x-request-id': id } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('x-request-id')).toBe(id);
  });

  it("replaces a client's id that is too long or holds anything but visible ASCII", async () => {
    t = await startApp(target);
    for (const insane of ['x'.repeat(129), 'has space', 'tab\there', 'caf\u00e9']) {
      const answer = await t.api('GET', 'instance/fetchInstances', { headers: { 'x-request-id': insane } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-request-id')).toMatch(uuid);
    }
    const longest = 'y'.repeat(128);
    const kept = await t.api('GET', 'instance/fetchInstances', { headers: { 'x-request-id': longest } });
    expect(kept.headers.get('x-request-id')).toBe(longest);
  });

  it('lets a browser page read the id (CORS exposes the header)', async () => {
    t = await startApp(target);
    const answer = await t.api('GET', 'instance/fetchInstances', { headers: { origin: 'https://app.example' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-expose-headers')).toMatch(/\bX-Request-Id\b/);
  });

  it("puts the request's id on each of its log lines", async () => {
    const captured = capturedLogger('debug');
    t = await startApp(target, { LOG_LEVEL: 'debug' }, captured.logger);
    const id = 'client-id-91c4';
    const missing = await t.api('GET', '/no-such-route', { headers: { 'x-request-id': id } });
    expect(missing.status).toBe(404);
    const generated = await t.api('GET', 'instance/fetchInstances');
    const generatedId = generated.headers.get('x-request-id');
    const ofRequest = (reqId: string | null) => captured.lines.filter((line) => line.reqId === reqId).map((line) => line.msg);
    expect(ofRequest(id)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
    expect(ofRequest(generatedId)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
    const access = captured.lines.filter((line) => line.msg === 'incoming request' || line.msg === 'request completed');
    for (const line of access) expect([id, generatedId]).toContain(line.reqId);
  });
});
