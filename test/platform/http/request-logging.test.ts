// What the service logs about API requests: no access lines unless debugging, and never keys or message text.
import { afterEach, describe, expect, it } from 'vitest';
import { linkedSandbox, startApp, storeTargets, type TestApp } from '../../support/harness.js';
import { capturedLogger } from '../../support/captured-logger.js';

const [sqlite] = await storeTargets();

describe('request logging', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** Links a sandbox instance and sends one text with a recognisable body; answers what must never be logged. */
  async function sendOne(app: TestApp) {
    const { apikey } = await linkedSandbox(app, 'log-1', '5511911110001');
    const text = 'private-body-7d1c3e';
    const sent = await app.api('POST', 'message/sendText/log-1', { key: apikey, body: { number: '5511922220002', text } });
    expect(sent.status).toBe(201);
    const missing = await app.api('GET', '/no-such-route');
    expect(missing.status).toBe(404);
    return { secrets: [app.globalKey, apikey, text] };
  }

  it('writes no access lines at info, and no keys or message text', async () => {
    const captured = capturedLogger('info');
    t = await startApp(sqlite, { LOG_LEVEL: 'info' }, captured.logger);
    const { secrets } = await sendOne(t);
    const messages = captured.lines.map((line) => line.msg);
    expect(messages).not.toContain('incoming request');
    expect(messages).not.toContain('request completed');
    expect(messages.filter((m) => typeof m === 'string' && / not found$/.test(m))).toEqual([]);
    for (const secret of secrets) expect(captured.raw.filter((line) => line.includes(secret))).toEqual([]);
  });

  it('writes an access line per request when debugging, with its request id, and still no keys', async () => {
    const captured = capturedLogger('debug');
    t = await startApp(sqlite, { LOG_LEVEL: 'debug' }, captured.logger);
    const { secrets } = await sendOne(t);
    const incoming = captured.lines.filter((line) => line.msg === 'incoming request');
    const completed = captured.lines.filter((line) => line.msg === 'request completed');
    const send = incoming.find((line) => (line.req as { url?: string }).url === '/messenger/message/sendText/log-1');
    expect(send).toBeDefined();
    const sendCompleted = completed.find((line) => line.reqId === send!.reqId);
    expect(sendCompleted).toMatchObject({ res: { statusCode: 201 } });
    const unknown = incoming.find((line) => (line.req as { url?: string }).url === '/no-such-route');
    expect(completed.find((line) => line.reqId === unknown?.reqId)).toMatchObject({ res: { statusCode: 404 } });
    for (const secret of secrets) expect(captured.raw.filter((line) => line.includes(secret))).toEqual([]);
  });
});
