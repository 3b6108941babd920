// Meta message templates over HTTP on both stores: template/create, template/find and message/sendTemplate of a
// WHATSAPP-BUSINESS instance against a fake Graph API on loopback that checks each request as Meta documents it (path,
// version, bearer token, exact body), Meta's refusals as 400s, and "Method not available" on the other kinds.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkedSandbox, startApp, storeTargets, type TestApp } from '../../support/harness.js';
import { expect400 } from '../../support/answers.js';
import { waitFor } from '../../support/wait.js';
import { uniqueName } from '../../support/unique.js';

// biome-ignore lint/suspicious/noExplicitAny: request bodies and answers are inspected field by field
type Json = any;

const targets = await storeTargets();

const version = 'v21.0';
const metaToken = `EAAG${randomBytes(24).toString('hex')}`;
const phoneId = '106540352242922';
const wabaId = '102290129340398';
const customer = '4915112345678';

interface GraphCall {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  json?: Json;
}

const graphError = (status: number, code: number, message: string, extra: Record<string, unknown> = {}) => ({
  status,
  body: { error: { message, type: 'OAuthException', code, fbtrace_id: `A${randomBytes(8).toString('hex')}`, ...extra } },
});

/** Plays Meta's template endpoints and /messages for template sends; keeps every call; answers Meta's errors. */
class FakeTemplateGraph {
  readonly calls: GraphCall[] = [];
  readonly problems: string[] = [];
  /** The business's templates: created ones (PENDING) and the approved ones a test puts here. */
  readonly templates: Json[] = [{ id: '900000000000001', name: 'order_update', language: 'en_US', status: 'APPROVED', category: 'UTILITY', components: [] }];
  private server!: Server;
  private nextId = 1;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { status, body } = this.handle(req.method ?? 'GET', req.url ?? '/', req.headers, Buffer.concat(chunks));
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  of(edge: string): GraphCall[] {
    return this.calls.filter((call) => call.path.endsWith(`/${edge}`));
  }

  private handle(method: string, url: string, headers: IncomingHttpHeaders, raw: Buffer): { status: number; body: unknown } {
    const parsed = new URL(url, 'http://graph.test');
    const call: GraphCall = { method, path: parsed.pathname, query: parsed.searchParams, headers };
    this.calls.push(call);
    const match = /^\/(v\d+\.\d+)\/(\d+)\/(message_templates|messages)$/.exec(parsed.pathname);
    if (!match) {
      this.problems.push(`unexpected ${method} ${url}`);
      return graphError(400, 2500, 'Unknown path components');
    }
    const [, callVersion, node, edge] = match;
    if (callVersion !== version) this.problems.push(`version ${callVersion} instead of ${version}`);
    if (headers.authorization !== `Bearer ${metaToken}`) return graphError(401, 190, 'Invalid OAuth access token - Cannot parse access token');
    if ((edge === 'message_templates' && node !== wabaId) || (edge === 'messages' && node !== phoneId)) {
      return graphError(400, 100, `Unsupported ${method.toLowerCase()} request. Object with ID '${node}' does not exist`, { error_subcode: 33 });
    }
    if (method !== 'GET') {
      if (!(headers['content-type'] ?? '').startsWith('application/json')) this.problems.push(`content-type ${headers['content-type']}`);
      call.json = JSON.parse(raw.toString('utf8'));
    }
    if (edge === 'messages') return this.message(call.json);
    if (method === 'GET') return this.list(call.query);
    return this.create(call.json);
  }

  /** POST message_templates: Meta's fields only; a name already used in that language is Meta's refusal. */
  private create(body: Json): { status: number; body: unknown } {
    const extra = Object.keys(body).filter((key) => !['name', 'category', 'allow_category_change', 'language', 'components'].includes(key));
    if (extra.length > 0) this.problems.push(`unexpected template keys ${extra.join(', ')}`);
    if (!/^[a-z0-9_]+$/.test(body.name ?? '') || !['AUTHENTICATION', 'MARKETING', 'UTILITY'].includes(body.category) || !Array.isArray(body.components)) {
      return graphError(400, 100, 'Invalid parameter');
    }
    if (this.templates.some((template) => template.name === body.name && template.language === body.language)) {
      return graphError(400, 100, 'Invalid parameter', {
        error_subcode: 2388024,
        error_user_title: 'Content in This Language Already Exists',
        error_user_msg: 'There is already content for this message template in this language.',
      });
    }
    const id = String(910000000000000 + this.nextId++);
    this.templates.push({ id, name: body.name, language: body.language, status: 'PENDING', category: body.category, components: body.components });
    return { status: 200, body: { id, status: 'PENDING', category: body.category } };
  }

  /** GET message_templates: two per page (fewer than asked, as Meta may), with cursors. */
  private list(query: URLSearchParams): { status: number; body: unknown } {
    if (query.get('limit') === null) this.problems.push('template list without a limit');
    const start = Number(query.get('after') ?? 0);
    const page = this.templates.slice(start, start + 2);
    const end = start + page.length;
    const more = end < this.templates.length;
    return {
      status: 200,
      body: {
        data: page,
        paging: {
          cursors: { before: String(start), after: String(end) },
          ...(more ? { next: `https://graph.facebook.com/${version}/${wabaId}/message_templates?after=${end}` } : {}),
        },
      },
    };
  }

  /** POST messages of type template: Meta's message object; a template it has not approved is its refusal. */
  private message(body: Json): { status: number; body: unknown } {
    const allowed = ['messaging_product', 'recipient_type', 'to', 'type', 'context', 'template'];
    const extra = Object.keys(body).filter((key) => !allowed.includes(key));
    if (extra.length > 0 || body.messaging_product !== 'whatsapp' || body.type !== 'template') this.problems.push(`unexpected message ${JSON.stringify(body)}`);
    const { name, language } = body.template ?? {};
    const approved = this.templates.find((template) => template.name === name && template.language === language?.code && template.status === 'APPROVED');
    if (!approved) {
      return graphError(404, 132001, '(#132001) Template name does not exist in the translation', {
        error_data: { messaging_product: 'whatsapp', details: `template name (${name}) does not exist in ${language?.code}` },
      });
    }
    const wamid = `wamid.HBgL${randomBytes(18).toString('base64url').toUpperCase()}`;
    return { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: wamid }] } };
  }
}

describe.each(targets)('Meta message templates on $name', (target) => {
  describe.skipIf(!target.available)(`WHATSAPP-BUSINESS against a fake Graph API (${target.name})`, () => {
    let graph: FakeTemplateGraph;
    let t: TestApp;
    let meta: string;

    async function createMeta(extra: Record<string, unknown> = { businessId: wabaId }): Promise<string> {
      const instanceName = uniqueName('tpl-meta');
      const res = await t.api('POST', 'instance/create', {
        body: { instanceName, integration: 'WHATSAPP-BUSINESS', token: metaToken, number: phoneId, ...extra },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return instanceName;
    }

    beforeAll(async () => {
      graph = new FakeTemplateGraph();
      await graph.start();
      t = await startApp(target, { WA_BUSINESS_URL: graph.url, WA_BUSINESS_VERSION: version });
      meta = await createMeta();
    });
    afterAll(async () => {
      await t?.close();
      await graph?.close();
      expect(graph?.problems ?? []).toEqual([]);
    });

    const components = [
      { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['#1234'] } },
      { type: 'BODY', text: 'Hello {{1}}, your order ships {{2}}.', example: { body_text: [['Kim', 'tomorrow']] } },
      { type: 'FOOTER', text: 'Reply STOP to opt out' },
      { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Track it' }] },
    ];

    it('template/create posts the template to /<version>/<businessId>/message_templates and answers 201 with the stored template', async () => {
      const res = await t.api('POST', `template/create/${meta}`, {
        body: { name: 'shipping_notice', category: 'UTILITY', language: 'en_US', components, allowCategoryChange: true, webhookUrl: 'https://crm.example/tpl' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const [call] = graph.of('message_templates').filter((c) => c.method === 'POST');
      expect(call.path).toBe(`/${version}/${wabaId}/message_templates`);
      expect(call.headers.authorization).toBe(`Bearer ${metaToken}`);
      expect(call.json).toEqual({ name: 'shipping_notice', category: 'UTILITY', allow_category_change: true, language: 'en_US', components });
      const instanceId = t.services.registry.byInstanceName(meta)!.id;
      expect(res.body).toEqual({
        id: expect.any(String),
        templateId: '910000000000001',
        name: 'shipping_notice',
        template: { id: '910000000000001', status: 'PENDING', category: 'UTILITY' },
        webhookUrl: 'https://crm.example/tpl',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        updatedAt: res.body.createdAt,
        instanceId,
      });
      const stored = await t.services.store.db.selectFrom('templates').selectAll().where('instance_id', '=', instanceId).execute();
      expect(stored.map((row) => [row.id, row.template_id, row.name, JSON.parse(row.template)])).toEqual([
        [res.body.id, '910000000000001', 'shipping_notice', { id: '910000000000001', status: 'PENDING', category: 'UTILITY' }],
      ]);
      // The same template name on another instance is its own (upstream's names are unique across all instances).
      const other = await createMeta();
      const again = await t.api('POST', `template/create/${other}`, { body: { name: 'welcome_other', category: 'MARKETING', language: 'pt_BR', components } });
      expect(again.status, JSON.stringify(again.body)).toBe(201);
      expect(graph.of('message_templates').at(-1)?.json).toEqual({ name: 'welcome_other', category: 'MARKETING', language: 'pt_BR', components });
    });

    it("template/create turns Meta's refusal into a 400 with Meta's words; a wrong Meta token is a 400 too, never a 401", async () => {
      const body = { name: 'shipping_notice', category: 'UTILITY', language: 'en_US', components };
      const duplicate = await t.api('POST', `template/create/${meta}`, { body });
      expect(duplicate.status, JSON.stringify(duplicate.body)).toBe(400);
      expect(duplicate.body).toEqual({
        status: 400,
        error: 'Bad Request',
        response: {
          message: [
            'Meta error 100 (subcode 2388024): Invalid parameter',
            'Content in This Language Already Exists: There is already content for this message template in this language.',
          ],
        },
      });
      const wrongToken = await createMeta({ businessId: wabaId, token: `EAAG${randomBytes(24).toString('hex')}` });
      const refused = await t.api('POST', `template/create/${wrongToken}`, { body: { ...body, name: 'other_name' } });
      expect400(refused, /Meta error 190: Invalid OAuth access token/);
      const found = await t.api('GET', `template/find/${wrongToken}`);
      expect400(found, /Meta error 190/);
    });

    it('template/create refuses a body Meta would refuse with a 400 naming the field, before calling Graph', async () => {
      const before = graph.calls.length;
      const create = (body: unknown) => t.api('POST', `template/create/${meta}`, { body });
      expect400(await create({ name: 'Bad Name', category: 'UTILITY', language: 'en_US', components }), /name/);
      expect400(await create({ name: 'ok_name', category: 'PROMO', language: 'en_US', components }), /category/);
      expect400(await create({ name: 'ok_name', category: 'UTILITY', language: 'en_US', components: [] }), /components/);
      expect400(await create({ name: 'ok_name', category: 'UTILITY', components }), /language/);
      expect400(await create({ name: 'ok_name', category: 'UTILITY', language: 'en_US', components: [{ text: 'no type' }] }), /type/);
      expect(graph.calls.length).toBe(before);
    });

    it('template/find answers every template of the business, page after page, as Meta lists them', async () => {
      const before = graph.of('message_templates').filter((c) => c.method === 'GET').length;
      const res = await t.api('GET', `template/find/${meta}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual(graph.templates);
      expect(res.body.map((template: Json) => template.name)).toEqual(['order_update', 'shipping_notice', 'welcome_other']);
      const gets = graph
        .of('message_templates')
        .filter((c) => c.method === 'GET')
        .slice(before);
      expect(gets.map((c) => [c.path, c.query.get('limit'), c.query.get('after')])).toEqual([
        [`/${version}/${wabaId}/message_templates`, '100', null],
        [`/${version}/${wabaId}/message_templates`, '100', '2'],
      ]);
      expect(gets.every((c) => c.headers.authorization === `Bearer ${metaToken}`)).toBe(true);
    });

    it('an instance without businessId is told to give it, without a Graph call', async () => {
      const noBusiness = await createMeta({});
      const before = graph.calls.length;
      expect400(await t.api('GET', `template/find/${noBusiness}`), /has no businessId/);
      expect400(
        await t.api('POST', `template/create/${noBusiness}`, { body: { name: 'x_y', category: 'UTILITY', language: 'en_US', components } }),
        /has no businessId/,
      );
      expect(graph.calls.length).toBe(before);
      const badId = await t.api('POST', 'instance/create', {
        body: { instanceName: uniqueName('tpl-bad'), integration: 'WHATSAPP-BUSINESS', token: metaToken, number: phoneId, businessId: 'acct-1' },
      });
      expect400(badId, /businessId must be the WhatsApp Business Account id/);
    });

    it('sendTemplate sends Meta the template message, answers 201 with the stored record, and keeps it as a message', async () => {
      const sendComponents = [
        { type: 'header', parameters: [{ type: 'text', text: '#1234' }] },
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'Kim' },
            { type: 'date_time', date_time: { fallback_value: 'tomorrow' } },
          ],
        },
        { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'TRACK-1234' }] },
      ];
      const before = graph.of('messages').length;
      const res = await t.api('POST', `message/sendTemplate/${meta}`, {
        body: { number: `+${customer}`, name: 'order_update', language: 'en_US', components: sendComponents },
        headers: { 'Idempotency-Key': 'tpl-1' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const template = { name: 'order_update', language: { code: 'en_US' }, components: sendComponents };
      expect(res.body).toMatchObject({
        key: { remoteJid: `${customer}@s.whatsapp.net`, fromMe: true, id: expect.any(String) },
        message: { templateMessage: template },
        messageType: 'templateMessage',
        messageTimestamp: expect.any(String),
      });
      const sent = graph.of('messages').slice(before);
      expect(sent.map((c) => c.json)).toEqual([{ messaging_product: 'whatsapp', recipient_type: 'individual', to: customer, type: 'template', template }]);
      expect(sent[0].path).toBe(`/${version}/${phoneId}/messages`);

      // The same Idempotency-Key answers the same record and sends nothing again.
      const again = await t.api('POST', `message/sendTemplate/${meta}`, {
        body: { number: `+${customer}`, name: 'order_update', language: 'en_US', components: sendComponents },
        headers: { 'Idempotency-Key': 'tpl-1' },
      });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.key.id).toBe(res.body.key.id);
      expect(graph.of('messages').length).toBe(before + 1);

      // Stored as a message of the chat (findMessages), in the state Meta's answer left it.
      const found = await t.api('POST', `chat/findMessages/${meta}`, { body: { where: { key: { id: res.body.key.id } } } });
      expect(found.status).toBe(200);
      expect(found.body.messages.records).toEqual([
        expect.objectContaining({
          key: expect.objectContaining({ id: res.body.key.id }),
          messageType: 'templateMessage',
          message: { templateMessage: template },
        }),
      ]);
    });

    it('sendTemplate honours delay (answered at once, sent after) and quotes a sent message as Graph context', async () => {
      const first = await t.api('POST', `message/sendTemplate/${meta}`, { body: { number: customer, name: 'order_update', language: 'en_US' } });
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      const wamid = (await t.services.connectorHost.sessionKeys.get(t.services.registry.byInstanceName(meta)!.id, 'cloud-api.key', [first.body.key.id]))[
        first.body.key.id
      ];
      expect(wamid).toMatch(/^wamid\./);
      const before = graph.of('messages').length;
      const startedAt = Date.now();
      const delayed = await t.api('POST', `message/sendTemplate/${meta}`, {
        body: { number: customer, name: 'order_update', language: 'en_US', delay: 600, quoted: { key: { id: first.body.key.id } } },
      });
      expect(delayed.status, JSON.stringify(delayed.body)).toBe(201);
      expect(delayed.body.status).toBe('PENDING');
      expect(Date.now() - startedAt).toBeLessThan(600);
      await waitFor(() => graph.of('messages').length === before + 1, 5_000);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(600);
      expect(graph.of('messages').at(-1)?.json).toEqual({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: customer,
        context: { message_id: wamid },
        type: 'template',
        template: { name: 'order_update', language: { code: 'en_US' } },
      });
    });

    it("sendTemplate turns Meta's refusal into a 400 with Meta's words, and refuses bad bodies and groups before Graph", async () => {
      const refused = await t.api('POST', `message/sendTemplate/${meta}`, { body: { number: customer, name: 'never_approved', language: 'en_US' } });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.response.message).toEqual([
        'Meta error 132001: Template name does not exist in the translation',
        'template name (never_approved) does not exist in en_US',
      ]);
      const before = graph.calls.length;
      const send = (body: unknown) => t.api('POST', `message/sendTemplate/${meta}`, { body });
      expect400(await send({ number: customer, language: 'en_US' }), /name/);
      expect400(await send({ number: customer, name: 'order_update' }), /language/);
      expect400(await send({ name: 'order_update', language: 'en_US' }), /number/);
      expect400(await send({ number: customer, name: 'order_update', language: 'en_US', components: [{ parameters: [] }] }), /type/);
      expect400(await send({ number: '120363025555555555@g.us', name: 'order_update', language: 'en_US' }), /group/);
      expect(graph.calls.length).toBe(before);
    });

    it('the OpenAPI document describes the template routes: their bodies and their answers', async () => {
      const doc = await t.api('GET', 'docs/json', { key: null });
      expect(doc.status).toBe(200);
      const create = doc.body.paths['/messenger/template/create/{instance}'].post;
      const createBody = create.requestBody.content['application/json'].schema;
      expect(createBody.required).toEqual(['name', 'category', 'language', 'components']);
      expect(Object.keys(createBody.properties)).toEqual(['name', 'category', 'language', 'components', 'allowCategoryChange', 'webhookUrl']);
      expect(Object.keys(create.responses['201'].content['application/json'].schema.properties)).toEqual([
        'id',
        'templateId',
        'name',
        'template',
        'webhookUrl',
        'createdAt',
        'updatedAt',
        'instanceId',
      ]);
      const find = doc.body.paths['/messenger/template/find/{instance}'].get;
      expect(find.responses['200'].content['application/json'].schema.type).toBe('array');
      const send = doc.body.paths['/messenger/message/sendTemplate/{instance}'].post;
      const sendBody = send.requestBody.content['application/json'].schema;
      expect(sendBody.required).toEqual(expect.arrayContaining(['number', 'name', 'language']));
      expect(JSON.stringify(sendBody.properties.components)).toContain('parameters');
      expect(Object.keys(send.responses)).toContain('201');
    });

    it('template routes and sendTemplate answer "Method not available" on the other kinds, naming the integration', async () => {
      const sandbox = uniqueName('tpl-sbx');
      await linkedSandbox(t, sandbox, `4917${Date.now().toString().slice(-9)}`);
      const evolution = uniqueName('tpl-evo');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: evolution, integration: 'EVOLUTION' } })).status).toBe(201);
      const web = uniqueName('tpl-web');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: web, integration: 'WHATSAPP-BAILEYS' } })).status).toBe(201);
      for (const [name, label] of [
        [sandbox, 'Sandbox'],
        [evolution, 'Evolution Channel'],
        [web, 'WhatsApp Baileys'],
      ]) {
        const unavailable = new RegExp(`Method not available on ${label}`);
        expect400(await t.api('GET', `template/find/${name}`), unavailable);
        expect400(await t.api('POST', `template/create/${name}`, { body: { name: 'x_y', category: 'UTILITY', language: 'en_US', components } }), unavailable);
        expect400(await t.api('POST', `message/sendTemplate/${name}`, { body: { number: customer, name: 'order_update', language: 'en_US' } }), unavailable);
      }
    });
  });
});
