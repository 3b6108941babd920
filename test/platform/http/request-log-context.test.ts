// Every line logged while a request is answered carries its id (reqId), the services' lines too; later lines of work
// it started do not.
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, storeTargets, type TestApp } from '../../support/harness.js';
import { capturedLogger } from '../../support/captured-logger.js';
import { waitFor } from '../../support/wait.js';

const targets = await storeTargets();
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.each(targets)('request ids on service log lines on $name', (target) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('every line logged while an instance is created carries the id; the QR code giving up later carries none', async () => {
    const captured = capturedLogger('info');
    // One QR code for 4 s: the sandbox connector gives up seconds after the answer, in work the create started (the
    // create answers well within that, even on a loaded machine).
    t = await startApp(target, { QRCODE_LIMIT: '1', QRCODE_TTL_MS: '4000' }, captured.logger);
    const before = captured.lines.length;
    const created = await t.api('POST', 'instance/create', {
      body: { instanceName: 'traced', integration: 'SANDBOX', qrcode: true },
      headers: { 'x-request-id': 'my-id-123' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBe('my-id-123');
    const whileAnswering = captured.lines.slice(before);
    expect(whileAnswering.map((line) => line.msg)).toEqual(expect.arrayContaining(['instance created', 'connection state changed']));
    for (const line of whileAnswering) expect(line).toMatchObject({ reqId: 'my-id-123' });
    expect(whileAnswering.find((line) => line.msg === 'instance created')).toMatchObject({ instance: 'traced', reqId: 'my-id-123' });
    expect(whileAnswering.find((line) => line.msg === 'connection state changed')).toMatchObject({ state: 'connecting', reqId: 'my-id-123' });

    const closed = () => captured.lines.find((line) => line.msg === 'connection state changed' && line.state === 'close');
    await waitFor(() => closed() !== undefined, 20_000, { what: () => JSON.stringify(captured.lines) });
    const gaveUp = captured.lines.find((line) => line.msg === 'sandbox QR code limit reached');
    expect(gaveUp).toBeDefined();
    expect(gaveUp?.reqId).toBeUndefined();
    expect(closed()?.reqId).toBeUndefined();
    // Each line names the id once: Fastify's request loggers bind it, the services' lines get it from the context.
    for (const raw of captured.raw) expect(raw.split('"reqId"').length).toBeLessThanOrEqual(2);
  }, 45_000);

  it("a later connection change carries the id of the request that caused it, not the creating request's", async () => {
    const captured = capturedLogger('info');
    t = await startApp(target, {}, captured.logger);
    const created = await t.api('POST', 'instance/create', {
      body: { instanceName: 'linked-later', integration: 'SANDBOX', qrcode: true },
      headers: { 'x-request-id': 'create-req-1' },
    });
    expect(created.status).toBe(201);
    const before = captured.lines.length;
    const scan = await t.api('POST', 'sandbox/scan', {
      body: { code: created.body.qrcode.code, number: '5511987650001' },
      headers: { 'x-request-id': 'scan-req-2' },
    });
    expect(scan.status).toBe(200);
    const ofScan = captured.lines.slice(before);
    expect(ofScan.find((line) => line.msg === 'connection state changed')).toMatchObject({ state: 'open', reqId: 'scan-req-2' });
    for (const line of ofScan) expect(line.reqId).toBe('scan-req-2');
    expect(captured.lines.filter((line) => line.reqId === 'create-req-1').map((line) => line.msg)).not.toContain('sandbox instance linked');
  });

  it('a generated id is answered in x-request-id and carried by the lines of its request', async () => {
    const captured = capturedLogger('info');
    t = await startApp(target, {}, captured.logger);
    const created = await t.api('POST', 'instance/create', { body: { instanceName: 'untraced', integration: 'SANDBOX' } });
    expect(created.status).toBe(201);
    const id = created.headers.get('x-request-id');
    expect(id).toMatch(uuid);
    expect(captured.lines.find((line) => line.msg === 'instance created')).toMatchObject({ instance: 'untraced', reqId: id });
  });

  it("Fastify's own request lines keep one reqId each at debug level", async () => {
    const captured = capturedLogger('debug');
    t = await startApp(target, { LOG_LEVEL: 'debug' }, captured.logger);
    const created = await t.api('POST', 'instance/create', {
      body: { instanceName: 'debugged', integration: 'SANDBOX' },
      headers: { 'x-request-id': 'debug-req-3' },
    });
    expect(created.status).toBe(201);
    await waitFor(() => captured.lines.some((line) => line.msg === 'request completed' && line.reqId === 'debug-req-3'), 5_000);
    const ofRequest = captured.lines.filter((line) => line.reqId === 'debug-req-3').map((line) => line.msg);
    expect(ofRequest).toEqual(expect.arrayContaining(['incoming request', 'instance created', 'request completed']));
    for (const raw of captured.raw) expect(raw.split('"reqId"').length).toBeLessThanOrEqual(2);
  });
});
