// The served OpenAPI document and docs page: Switchboard's title and mark, every route's answer documented, the
// service routes in it, request examples that succeed as they stand, and every validation error of a body at once.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleGroupJid } from '../../src/groups/schemas.js';
import { linkedSandbox, startApp, storeTargets, type TestApp } from '../support/harness.js';

const targets = await storeTargets();

// Routes with a JSON body that give no example of their own (the docs page makes one from the schema), and why.
const withoutOwnExample = new Set<string>([
  // None at present: a route added without one must be listed here with the reason (or given one).
]);

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is JSON read field by field
type Json = any;

const methods = ['get', 'post', 'put', 'delete', 'patch'] as const;

function operations(doc: Json): { method: string; path: string; op: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    methods.filter((method) => item[method]).map((method) => ({ method, path, op: item[method] })),
  );
}

/**
 * The example a docs page shows for a schema, as Swagger UI builds it: the schema's own example, else one made from
 * its shape (the first enum value or union member, every property, one array item, "string", 0, true).
 */
function sample(schema: Json): unknown {
  if (!schema || typeof schema !== 'object') return undefined;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const member = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(member)) return sample(member.find((m: Json) => m.type !== 'null') ?? member[0]);
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map(sample));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    return Object.fromEntries(Object.entries((schema.properties ?? {}) as Record<string, Json>).map(([name, property]) => [name, sample(property)]));
  }
  if (type === 'array') return [sample(schema.items)];
  if (type === 'integer' || type === 'number') return schema.minimum ?? 0;
  if (type === 'boolean') return true;
  if (type === 'string') return schema.format === 'date-time' ? new Date().toISOString() : 'string';
  return undefined;
}

/** Whether the operation's request body carries an example of its own in the document. */
function hasOwnExample(op: Json): boolean {
  const media = op.requestBody?.content?.['application/json'];
  return Boolean(media && (media.example !== undefined || media.examples));
}

/** The request example of an operation, as the docs page shows it. */
function requestExample(op: Json): unknown {
  const media = op.requestBody?.content?.['application/json'];
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  const named = media.examples && Object.values(media.examples as Record<string, { value: unknown }>)[0];
  return named ? named.value : sample(media.schema);
}

/** The group the group examples address, on the sandbox network: `owner` created it, 5511999999999 is a member. */
async function seedExampleGroup(t: TestApp, owner: string): Promise<void> {
  const jid = exampleGroupJid;
  const now = Math.floor(Date.now() / 1000);
  const db = t.services.store.db;
  await db
    .insertInto('sandbox_groups')
    .values({
      jid,
      subject: 'Support team',
      subject_owner: owner,
      subject_time: now,
      description: null,
      desc_id: null,
      desc_owner: null,
      desc_time: null,
      picture_file: null,
      owner_jid: owner,
      creation: now,
      announce: 0,
      locked: 0,
      ephemeral: 0,
      invite_code: 'Ex4mpleInv1teCodeAbCdE',
      updated_at: Date.now(),
    })
    .execute();
  await db
    .insertInto('sandbox_group_members')
    .values([
      { group_jid: jid, jid: owner, role: 'superadmin', added_at: Date.now() },
      { group_jid: jid, jid: '5511999999999@s.whatsapp.net', role: 'member', added_at: Date.now() },
    ])
    .execute();
}

const graphVersion = 'v21.0';
const metaToken = 'EAAGexampleDocsToken0123456789';
const phoneId = '106540352242922';
const wabaId = '102290129340398';

/**
 * Meta's Graph API as far as the template examples use it, on loopback: creating a template (it answers PENDING) and
 * sending one (a message id), for the bearer token and ids of the docs' WHATSAPP-BUSINESS instance only. Every request
 * it could not answer is kept, and the test expects none.
 */
async function fakeTemplateGraph(): Promise<{ url: string; answered: string[]; unexpected: string[]; close: () => Promise<void> }> {
  const answered: string[] = [];
  const unexpected: string[] = [];
  let nextId = 910000000000001;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const path = new URL(req.url ?? '/', 'http://graph.test').pathname;
      const body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json) : {};
      if (req.headers.authorization !== `Bearer ${metaToken}`) unexpected.push(`${req.method} ${path} without the token`);
      if (req.method === 'POST' && path === `/${graphVersion}/${wabaId}/message_templates`) {
        answered.push('template created');
        return answer(200, { id: String(nextId++), status: 'PENDING', category: body.category });
      }
      if (req.method === 'POST' && path === `/${graphVersion}/${phoneId}/messages` && body.type === 'template') {
        answered.push(`template ${body.template?.name} sent`);
        return answer(200, { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: `wamid.docs${nextId++}` }] });
      }
      unexpected.push(`${req.method} ${path} ${JSON.stringify(body).slice(0, 200)}`);
      return answer(400, { error: { message: 'Unknown path components', type: 'OAuthException', code: 2500 } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answered,
    unexpected,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(targets)('the OpenAPI document and docs page on $name', (target) => {
  describe.skipIf(!target.available)('served', () => {
    let t: TestApp;
    let doc: Json;
    let graph: Awaited<ReturnType<typeof fakeTemplateGraph>>;

    beforeAll(async () => {
      graph = await fakeTemplateGraph();
      t = await startApp(target, { METRICS_ENABLED: 'true', WA_BUSINESS_URL: graph.url, WA_BUSINESS_VERSION: graphVersion });
      doc = (await t.api('GET', '/messenger/docs/json')).body;
    });
    afterAll(async () => {
      await t?.close();
      await graph?.close();
    });

    it("is Switchboard's page: its title, its mark and favicon, no outside assets", async () => {
      const page = await fetch(`${t.url}/messenger/docs/static/index.html`);
      const html = await page.text();
      expect(html).toContain('<title>Switchboard API</title>');
      expect(html).not.toContain('Swagger UI</title>');
      // Every asset is the service's own (no CDN, no outside font).
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
      expect(html).toContain('href="./static/theme/favicon.svg"');
      const favicon = await fetch(`${t.url}/messenger/docs/static/theme/favicon.svg`);
      expect(favicon.status).toBe(200);
      expect(await favicon.text()).toContain('aria-label="Switchboard"');
      const initializer = await (await fetch(`${t.url}/messenger/docs/static/swagger-initializer.js`)).text();
      const logo = /img\.src = 'data:image\/svg\+xml;base64,([^']+)'/.exec(initializer)?.[1];
      expect(logo, 'the top bar shows our mark').toBeDefined();
      expect(Buffer.from(logo ?? '', 'base64').toString()).toContain('>Switchboard</text>');
      expect(doc.info.title).toBe('Switchboard API');
    });

    it('documents the answer of every route (a 2xx answer with its schema or media type)', () => {
      const undocumented = operations(doc)
        .filter(({ op }) => !Object.entries(op.responses ?? {}).some(([code, answer]) => code.startsWith('2') && (answer as Json).content))
        .map(({ method, path }) => `${method.toUpperCase()} ${path}`);
      expect(undocumented).toEqual([]);
    });

    it('has the service routes: /, /health and /metrics, needing no key', () => {
      for (const path of ['/', '/health', '/metrics']) {
        expect(doc.paths[path]?.get, path).toBeDefined();
        expect(doc.paths[path].get.security, path).toEqual([]);
      }
      expect(doc.paths['/health'].get.responses['503']).toBeDefined();
      expect(Object.keys(doc.paths['/metrics'].get.responses['200'].content)).toEqual(['text/plain']);
    });

    it('the create example succeeds as it stands', async () => {
      const example = requestExample(doc.paths['/messenger/instance/create'].post);
      const created = await t.api('POST', 'instance/create', { body: example });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect((await t.api('DELETE', `instance/delete/${created.body.instance.instanceName}`)).status).toBe(200);
    });

    it('every request example in the document succeeds as it stands on a linked sandbox instance (or, where it names something that must exist first, answers a documented error)', async () => {
      const docsA = await linkedSandbox(t, 'docs-a', '5511977700001');
      await linkedSandbox(t, 'docs-b', '5511977700002');
      // What the examples name must exist, as it would on a deployment where someone reads the docs: the group the
      // group examples address (docs-a owns it, 5511999999999 is a member), written to the sandbox network's store
      // as WhatsApp would have it. (handleLabel's labelId "1" is WhatsApp Business's first default label, which every
      // account has.)
      await seedExampleGroup(t, docsA.owner);
      // Examples that name a thing only a running service has (a QR code, a message sent or received): they cannot
      // succeed as they stand, and must answer one of their documented errors (not a validation error) rather than fail.
      const needsSomethingFirst = new Set([
        'POST /messenger/sandbox/scan',
        'POST /messenger/sandbox/press/{instance}',
        'DELETE /messenger/chat/deleteMessageForEveryone/{instance}',
        'POST /messenger/chat/updateMessage/{instance}',
        'POST /messenger/chat/getBase64FromMediaMessage/{instance}',
        'POST /messenger/instance/create',
      ]);
      // Examples that need something outside a test on loopback: a proxy host on the internet (proxy/set checks that
      // it is reachable, and answers 400 naming the host when not). The example is realistic and valid against the
      // schema, which a documented 4xx that is not a validation error shows.
      const needsOutside = new Set(['POST /messenger/proxy/set/{instance}']);
      // Templates are Meta's (WHATSAPP-BUSINESS only): their examples go to an instance of that kind, against the fake
      // Graph API above (which takes any template send, as Meta does once a template is approved).
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: 'docs-meta', integration: 'WHATSAPP-BUSINESS', token: metaToken, number: phoneId, businessId: wabaId },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const onCloudApi = new Set(['POST /messenger/template/create/{instance}', 'POST /messenger/message/sendTemplate/{instance}']);
      // Voice notes and round videos take real audio and video from a URL on the internet: not fetched from here.
      const needsRealMedia = new Set(['POST /messenger/message/sendWhatsAppAudio/{instance}', 'POST /messenger/message/sendPtv/{instance}']);
      const failures: string[] = [];
      for (const { method, path, op } of operations(doc)) {
        if (!op.requestBody?.content?.['application/json']) continue;
        const name = `${method.toUpperCase()} ${path}`;
        if (needsRealMedia.has(name)) continue;
        // Routes listed as giving no example of their own (the docs page makes one from the schema) are not held to this.
        if (withoutOwnExample.has(name)) continue;
        const example = requestExample(op);
        const answer = await t.api(method.toUpperCase(), path.replace('{instance}', onCloudApi.has(name) ? 'docs-meta' : 'docs-a'), { body: example });
        const documented = Object.keys(op.responses ?? {});
        const validationError = answer.status === 400 && /must |required/.test(JSON.stringify(answer.body.response?.message ?? ''));
        // A documented error that is not a validation error: the example is valid, only what it names is missing.
        const ok =
          needsOutside.has(name) || needsSomethingFirst.has(name)
            ? answer.status < 500 && documented.includes(String(answer.status)) && !validationError
            : answer.status >= 200 && answer.status < 300;
        if (!ok) failures.push(`${name} ${JSON.stringify(example)} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
      }
      expect(failures).toEqual([]);
      expect(graph.unexpected).toEqual([]);
      expect(graph.answered.sort()).toEqual(['template created', 'template order_update sent']);
    });

    it('every route with a JSON body gives an example of its own, unless listed here with the reason', () => {
      const without = operations(doc)
        .filter(({ op }) => op.requestBody?.content?.['application/json'] && !hasOwnExample(op))
        .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
        .filter((name) => !withoutOwnExample.has(name));
      expect(without).toEqual([]);
    });

    it('lists every validation error of a body at once, in the error envelope', async () => {
      const answer = await t.api('POST', 'message/sendText/docs-a', { body: { number: 5511, text: 42, delay: 'soon', linkPreview: 'yes' } });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        status: 400,
        error: 'Bad Request',
        response: {
          message: expect.arrayContaining(['number must be a string', 'text must be a string', 'delay must be an integer', 'linkPreview must be a boolean']),
        },
      });
      expect(answer.body.response.message).toHaveLength(4);
    });
  });
});
