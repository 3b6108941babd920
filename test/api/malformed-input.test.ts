// Every route of the OpenAPI document answers malformed input with a 4xx error envelope, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkedSandbox, startApp, storeTargets, type TestApp } from '../support/harness.js';

const targets = await storeTargets();

const badBodies: unknown[] = [
  {},
  [],
  'text',
  42,
  null,
  { number: 123, text: ['x'], delay: 'soon', media: {}, values: 'a', webhook: 'x', websocket: [], presence: 7 },
  { number: '', text: '', media: '', sticker: '', name: '', values: [], selectableCount: -1, type: 'nope', content: '' },
  { number: '5511999999999', quoted: { key: {} }, mentioned: [1, 2], mediatype: 'image', media: 'not base64 !!!' },
  { webhook: { enabled: true, url: 'javascript:alert(1)', events: ['X'], headers: { a: 1 } } },
  { readMessages: [{ remoteJid: 5, id: null }] },
  { deliveryId: 'abc', status: 'alive' },
  { code: 5, number: null },
  { from: 'nobody', text: 5 },
];

describe.each(targets)('malformed input on every route ($name)', (target) => {
  describe.skipIf(!target.available)('routes', () => {
    let t: TestApp;
    let paths: [string, string][];

    beforeAll(async () => {
      t = await startApp(target);
      await linkedSandbox(t, 'robust', '5511966660001');
      const doc = await t.api('GET', 'docs/json', { key: null });
      paths = [];
      for (const [path, methods] of Object.entries(doc.body.paths as Record<string, Record<string, unknown>>)) {
        for (const method of Object.keys(methods)) {
          if (['post', 'put', 'patch'].includes(method)) paths.push([method.toUpperCase(), path]);
        }
      }
    });
    afterAll(async () => {
      await t?.close();
    });

    it('finds the write routes in the OpenAPI document', () => {
      expect(paths.length).toBeGreaterThanOrEqual(15);
    });

    it('answers each malformed body with a 4xx envelope that says what to fix', async () => {
      const failures: string[] = [];
      for (const [method, path] of paths) {
        const concrete = path.replace('{instance}', 'robust').replace('{file}', 'x.enc');
        for (const body of badBodies) {
          const res = await t.api(method, concrete.replace(/^\/messenger\//, ''), {
            body: JSON.stringify(body),
            headers: { 'content-type': 'application/json' },
          });
          if (path.endsWith('/webhook/meta')) continue; // Meta's signed webhook answers 401/503 by design, checked in its own tests.
          const ok =
            res.status >= 400 &&
            res.status < 500 &&
            res.body?.status === res.status &&
            Array.isArray(res.body?.response?.message) &&
            res.body.response.message.length > 0 &&
            res.body.response.message.every((m: unknown) => typeof m === 'string' && m.length > 0);
          if (!ok && !(res.status === 201 || res.status === 200))
            failures.push(`${method} ${path} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
          if (res.status >= 500) failures.push(`${method} ${path} ${JSON.stringify(body)} → ${res.status}`);
        }
      }
      expect(failures).toEqual([]);
    });

    it('keeps the instance intact after all of it', async () => {
      const state = await t.api('GET', 'instance/connectionState/robust');
      expect(state.body.instance).toMatchObject({ instanceName: 'robust', state: 'open' });
      const sent = await t.api('POST', 'message/sendText/robust', { body: { number: '5511966660002', text: 'still fine' } });
      expect(sent.status).toBe(201);
    });
  });
});
