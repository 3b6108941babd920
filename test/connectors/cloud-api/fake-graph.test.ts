// WHATSAPP-BUSINESS against a fake Graph API on loopback that checks every request as Meta documents it (path, version,
// bearer token, body) and plays webhooks back signed like Meta — with the real store, runtime and webhook deliveries.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../../support/harness.js';
import { sleep, waitFor } from '../../support/wait.js';
import { registerErrorHandling } from '../../../src/platform/http/error-handler.js';
import { ApiKeyCallers, registerAuth } from '../../../src/platform/http/auth.js';
import { silentLogger } from '../../../src/platform/logger.js';
import { ProviderError, TransientConnectorError, UnsupportedOperationError, type Connector, type OutboundMessage } from '../../../src/core/connector.js';
import { CloudApiConnector, cloudApiConnectorFactory } from '../../../src/connectors/cloud-api/connector.js';
import type { CloudApiSettings } from '../../../src/connectors/cloud-api/settings.js';
import { cloudApiWebhookRoutes } from '../../../src/connectors/cloud-api/webhook.routes.js';
import type { Instance } from '../../../src/core/instance.js';
import type { Services } from '../../../src/services.js';
import { statusOf } from '../../../src/platform/http/error-envelope.js';
import { isOggOpus, sine } from '../../support/media-fixtures.js';
import { buttonsContent } from '../../../src/messages/buttons.js';

// biome-ignore lint/suspicious/noExplicitAny: request bodies and answers are inspected field by field
type Json = any;

const targets = await storeTargets();

// ---------------------------------------------------------------------------------------------------------------------
// The fake Graph API
// ---------------------------------------------------------------------------------------------------------------------

interface GraphCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** JSON body of /messages calls. */
  json?: Json;
  /** Multipart fields of /media calls (the file as bytes with its part's type and name). */
  form?: { messaging_product: string | null; type: string | null; file: { bytes: Buffer; type: string; name: string } | null };
}

interface Canned {
  status: number;
  body: unknown;
  delayMs?: number;
  /** Bytes answered as they are instead of the JSON body (a media download). */
  raw?: Buffer;
}

const graphError = (status: number, code: number, message: string, details?: string, subcode?: number): Canned => ({
  status,
  body: {
    error: {
      message: `(#${code}) ${message}`,
      type: 'OAuthException',
      code,
      ...(subcode !== undefined ? { error_subcode: subcode } : {}),
      ...(details ? { error_data: { messaging_product: 'whatsapp', details } } : {}),
      fbtrace_id: `A${randomBytes(8).toString('hex')}`,
    },
  },
});

/**
 * Plays Meta: answers only what Meta's documentation allows, with Meta's error objects for everything else, and keeps
 * every call. Numbers of one phone-number id, one token and one version; anything else is refused as Graph refuses it.
 */
class FakeGraph {
  readonly calls: GraphCall[] = [];
  /** Requests the fake found wrong (beyond those it answers with a Graph error); a test fails when any is left. */
  readonly problems: string[] = [];
  readonly uploads = new Map<string, { bytes: Buffer; type: string }>();
  readonly sent = new Map<string, Json>();
  /** Recipients the test number may message (Meta's test numbers have such a list); null allows all. */
  allowed: Set<string> | null = null;
  private canned: { path: RegExp; answer: Canned }[] = [];
  private server!: Server;
  url = '';

  constructor(
    readonly version: string,
    readonly phoneNumberIds: string[],
    readonly token: string,
  ) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void this.handle(req.method ?? 'GET', req.url ?? '/', req.headers, Buffer.concat(chunks)).then(async ({ status, body, delayMs, raw }) => {
          if (delayMs) await sleep(delayMs);
          if (res.destroyed) return;
          if (raw) res.writeHead(status, { 'content-type': 'application/octet-stream' }).end(raw);
          else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        });
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The next call whose path matches gets this answer (once). */
  answerNext(path: RegExp, answer: Canned): void {
    this.canned.push({ path, answer });
  }

  messageCalls(): GraphCall[] {
    return this.calls.filter((c) => c.path.endsWith('/messages'));
  }

  mediaCalls(): GraphCall[] {
    return this.calls.filter((c) => c.path.endsWith('/media'));
  }

  private async handle(method: string, url: string, headers: IncomingHttpHeaders, raw: Buffer): Promise<Canned> {
    const path = url.split('?')[0];
    const call: GraphCall = { method, path, headers };
    this.calls.push(call);
    if (method === 'GET') return this.mediaGet(path, headers);
    const match = /^\/(v\d+\.\d+)\/([^/]+)\/(messages|media)$/.exec(path);
    if (!match || method !== 'POST') {
      this.problems.push(`unexpected ${method} ${path}`);
      return graphError(400, 2500, 'Unknown path components');
    }
    const [, version, phoneNumberId, edge] = match;
    if (version !== this.version) this.problems.push(`version ${version} instead of ${this.version}`);
    if (headers.authorization !== `Bearer ${this.token}`) {
      return graphError(401, 190, 'Invalid OAuth access token - Cannot parse access token');
    }
    if (!this.phoneNumberIds.includes(phoneNumberId)) {
      return graphError(
        400,
        100,
        `Unsupported post request. Object with ID '${phoneNumberId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
        undefined,
        33,
      );
    }
    if (edge === 'media') return this.media(call, headers, raw);
    return this.message(call, headers, raw);
  }

  /** GET /{version}/{media-id}: the media's URL (here, on this fake); GET /media-file/{id}: its bytes. Both need the token. */
  private mediaGet(path: string, headers: IncomingHttpHeaders): Canned {
    if (headers.authorization !== `Bearer ${this.token}`) return graphError(401, 190, 'Invalid OAuth access token - Cannot parse access token');
    const lookup = /^\/(v\d+\.\d+)\/(\d+)$/.exec(path);
    const file = /^\/media-file\/(\d+)$/.exec(path);
    const id = lookup?.[2] ?? file?.[1];
    const media = id === undefined ? undefined : this.uploads.get(id);
    if (!media) {
      if (!lookup && !file) this.problems.push(`unexpected GET ${path}`);
      return file ? { status: 404, body: null } : graphError(400, 100, `Unsupported get request. Object with ID '${id}' does not exist`, undefined, 33);
    }
    if (file) return { status: 200, body: null, raw: media.bytes };
    return {
      status: 200,
      body: { messaging_product: 'whatsapp', url: `${this.url}/media-file/${id}`, mime_type: media.type, file_size: media.bytes.length, id },
    };
  }

  private takeCanned(path: string): Canned | undefined {
    const index = this.canned.findIndex((c) => c.path.test(path));
    return index === -1 ? undefined : this.canned.splice(index, 1)[0].answer;
  }

  private async media(call: GraphCall, headers: IncomingHttpHeaders, raw: Buffer): Promise<Canned> {
    const contentType = headers['content-type'] ?? '';
    if (!contentType.startsWith('multipart/form-data')) {
      this.problems.push(`media upload with content-type ${contentType}`);
      return graphError(400, 100, 'Invalid parameter', 'The parameter file is required.');
    }
    const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
    const file = form.get('file');
    const fileBytes = file instanceof Blob ? Buffer.from(await file.arrayBuffer()) : null;
    call.form = {
      messaging_product: typeof form.get('messaging_product') === 'string' ? (form.get('messaging_product') as string) : null,
      type: typeof form.get('type') === 'string' ? (form.get('type') as string) : null,
      file: file instanceof Blob && fileBytes ? { bytes: fileBytes, type: file.type, name: (file as File).name ?? '' } : null,
    };
    const canned = this.takeCanned(call.path);
    if (canned) return canned;
    if (call.form.messaging_product !== 'whatsapp') return graphError(400, 100, 'Invalid parameter', 'The parameter messaging_product is required.');
    if (!call.form.file) return graphError(400, 100, 'Invalid parameter', 'The parameter file is required.');
    if (!call.form.type) return graphError(400, 100, 'Invalid parameter', 'The parameter type is required.');
    const id = String(1_000_000_000_000 + this.uploads.size + Math.floor(Math.random() * 1_000_000));
    this.uploads.set(id, { bytes: call.form.file.bytes, type: call.form.type });
    return { status: 200, body: { id } };
  }

  private message(call: GraphCall, headers: IncomingHttpHeaders, raw: Buffer): Canned {
    if (!(headers['content-type'] ?? '').startsWith('application/json')) {
      this.problems.push(`message with content-type ${headers['content-type']}`);
    }
    let body: Json;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return graphError(400, 100, 'Invalid parameter', 'Request body is not JSON');
    }
    call.json = body;
    const canned = this.takeCanned(call.path);
    if (canned) return canned;
    const problem = this.checkMessage(body);
    if (problem) return graphError(400, 100, 'Invalid parameter', problem);
    if (body.status === 'read') return { status: 200, body: { success: true } };
    if (this.allowed && !this.allowed.has(body.to)) {
      return graphError(
        400,
        131030,
        'Recipient phone number not in allowed list',
        'Recipient phone number not in allowed list: Add recipient phone number to recipient list and try again.',
      );
    }
    const wamid = `wamid.HBgL${randomBytes(18).toString('base64url').toUpperCase()}`;
    this.sent.set(wamid, body);
    return {
      status: 200,
      body: { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: wamid }] },
    };
  }

  /** Meta's documented message object rules; the first violation, or null. */
  private checkMessage(body: Json): string | null {
    if (body?.messaging_product !== 'whatsapp') return 'The parameter messaging_product is required.';
    if (body.status === 'read') return typeof body.message_id === 'string' && body.message_id.startsWith('wamid.') ? null : 'message_id must be a wamid';
    if (body.recipient_type !== undefined && body.recipient_type !== 'individual') return 'recipient_type must be individual';
    if (typeof body.to !== 'string' || !/^\d{5,15}$/.test(body.to)) return 'The parameter to is required (a phone number).';
    if (
      body.context !== undefined &&
      !((typeof body.context?.message_id === 'string' && this.sent.has(body.context.message_id)) || String(body.context?.message_id).startsWith('wamid.'))
    ) {
      return 'context.message_id must be a message id';
    }
    const type: string = body.type;
    const part = body[type];
    const extra = Object.keys(body).filter((k) => !['messaging_product', 'recipient_type', 'to', 'type', 'context', type].includes(k));
    if (extra.length > 0) return `Unexpected key(s) ${extra.join(', ')}`;
    if (typeof part !== 'object' || part === null) return `The parameter ${type} is required.`;
    const only = (allowed: string[]) => Object.keys(part).find((k) => !allowed.includes(k));
    switch (type) {
      case 'text':
        if (typeof part.body !== 'string' || part.body === '' || part.body.length > 4096) return 'text.body is required (1-4096 characters)';
        if (part.preview_url !== undefined && typeof part.preview_url !== 'boolean') return 'text.preview_url must be a boolean';
        return only(['body', 'preview_url']) ? `Unexpected key in text: ${only(['body', 'preview_url'])}` : null;
      case 'image':
      case 'video':
      case 'document':
      case 'audio':
      case 'sticker': {
        const allowed = {
          image: ['id', 'link', 'caption'],
          video: ['id', 'link', 'caption'],
          document: ['id', 'link', 'caption', 'filename'],
          audio: ['id', 'link', 'voice'],
          sticker: ['id', 'link'],
        }[type];
        if (only(allowed)) return `Unexpected key in ${type}: ${only(allowed)}`;
        if ((part.id === undefined) === (part.link === undefined)) return `${type} needs exactly one of id and link`;
        if (part.id !== undefined && !this.uploads.has(part.id)) return `${type}.id ${part.id} is not an uploaded media id`;
        if (part.voice !== undefined && typeof part.voice !== 'boolean') return 'audio.voice must be a boolean';
        return null;
      }
      case 'interactive': {
        if (part.type === 'button') return this.replyButtonsProblem(part);
        if (part.type !== 'list') return 'only list and button interactive messages are expected here';
        if (typeof part.body?.text !== 'string' || part.body.text === '' || part.body.text.length > 4096) return 'interactive.body.text is required';
        if (part.header !== undefined && (part.header.type !== 'text' || typeof part.header.text !== 'string' || part.header.text.length > 60))
          return 'a list header must be text up to 60 characters';
        if (part.footer !== undefined && (typeof part.footer.text !== 'string' || part.footer.text.length > 60)) return 'footer.text up to 60 characters';
        const action = part.action;
        if (typeof action?.button !== 'string' || action.button === '' || action.button.length > 20) return 'action.button is required (1-20 characters)';
        if (!Array.isArray(action.sections) || action.sections.length < 1 || action.sections.length > 10) return 'action.sections must have 1-10 sections';
        const rows = action.sections.flatMap((s: Json) => s.rows ?? []);
        if (rows.length < 1 || rows.length > 10) return 'a list has 1-10 rows in all';
        if (action.sections.length > 1 && action.sections.some((s: Json) => !s.title)) return 'sections need titles when there are several';
        for (const row of rows) {
          if (typeof row.id !== 'string' || row.id === '' || row.id.length > 200) return 'row id is required (up to 200 characters)';
          if (typeof row.title !== 'string' || row.title === '' || row.title.length > 24) return 'row title is required (up to 24 characters)';
          if (row.description !== undefined && (typeof row.description !== 'string' || row.description.length > 72))
            return 'row description up to 72 characters';
        }
        if (new Set(rows.map((r: Json) => r.id)).size !== rows.length) return 'row ids must be unique';
        return null;
      }
      case 'reaction':
        return typeof part.message_id === 'string' && typeof part.emoji === 'string' ? null : 'reaction needs message_id and emoji';
      case 'location':
        return typeof part.latitude === 'number' && typeof part.longitude === 'number' ? null : 'location needs latitude and longitude';
      case 'contacts': {
        if (!Array.isArray(part) || part.length === 0) return 'contacts must be a non-empty array';
        for (const contact of part) {
          if (typeof contact.name?.formatted_name !== 'string' || contact.name.formatted_name === '') return 'contact name.formatted_name is required';
          for (const phone of contact.phones ?? []) if (typeof phone.phone !== 'string') return 'contact phones need phone';
          for (const email of contact.emails ?? []) if (typeof email.email !== 'string' || email.email === '') return 'contact emails need email';
          for (const url of contact.urls ?? []) if (typeof url.url !== 'string' || url.url === '') return 'contact urls need url';
        }
        return null;
      }
      default:
        return `Unsupported message type ${type}`;
    }
  }

  /** Meta's rules for interactive reply buttons: a body up to 1024, a footer up to 60, 1-3 unique buttons. */
  private replyButtonsProblem(part: Json): string | null {
    if (typeof part.body?.text !== 'string' || part.body.text === '' || part.body.text.length > 1024) return 'interactive.body.text is required (up to 1024)';
    if (part.footer !== undefined && (typeof part.footer.text !== 'string' || part.footer.text.length > 60)) return 'footer.text up to 60 characters';
    const buttons = part.action?.buttons;
    if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3) return 'action.buttons must have 1-3 buttons';
    for (const button of buttons) {
      if (button.type !== 'reply') return 'buttons must be of type reply';
      if (typeof button.reply?.id !== 'string' || button.reply.id === '' || button.reply.id.length > 256) return 'reply.id is required (up to 256)';
      if (typeof button.reply?.title !== 'string' || button.reply.title === '' || button.reply.title.length > 20) return 'reply.title is required (up to 20)';
    }
    if (new Set(buttons.map((b: Json) => b.reply.id)).size !== buttons.length) return 'button ids must be unique';
    if (new Set(buttons.map((b: Json) => b.reply.title)).size !== buttons.length) return 'button titles must be unique';
    return null;
  }

  // ---- webhooks, as Meta sends them ----

  /** POSTs a payload to the callback, signed with the app secret (or with the given signature header, or none). */
  async play(callbackUrl: string, payload: unknown, options: { secret?: string; signature?: string | null; tamper?: boolean } = {}) {
    const body = JSON.stringify(payload);
    const signature =
      options.signature !== undefined
        ? options.signature
        : `sha256=${createHmac('sha256', options.secret ?? appSecret)
            .update(body)
            .digest('hex')}`;
    const sentBody = options.tamper ? body.replace('"text"', '"text" ') : body;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'facebookexternalua' };
    if (signature !== null) headers['x-hub-signature-256'] = signature;
    const res = await fetch(callbackUrl, { method: 'POST', headers, body: sentBody });
    const text = await res.text();
    let parsed: Json = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // plain answers
    }
    return { status: res.status, body: parsed };
  }
}

const appSecret = `app-secret-${randomBytes(8).toString('hex')}`;
const verifyToken = `verify-${randomBytes(8).toString('hex')}`;
const version = 'v21.0';
const metaToken = `EAAG${randomBytes(24).toString('hex')}`;
const customer = '4915112345678';

function envelope(phoneNumberId: string, value: Record<string, unknown>): Json {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId }, ...value },
          },
        ],
      },
    ],
  };
}

let wamidSeq = 0;
const inboundWamid = () =>
  `wamid.HBgNNDkxNTExMjM0NTY3OBUCABIYFjNFQjA${(++wamidSeq).toString().padStart(6, '0')}${randomBytes(4).toString('hex').toUpperCase()}`;

/** A `messages` webhook with one received message, and that message's wamid. */
function inboundPayload(phoneNumberId: string, message: Record<string, unknown>, from = customer, name = 'Kim Customer') {
  const wamid = inboundWamid();
  const payload = envelope(phoneNumberId, {
    contacts: [{ profile: { name }, wa_id: from }],
    messages: [{ from, id: wamid, timestamp: String(Math.floor(Date.now() / 1000)), ...message }],
  });
  // Kept beside the payload, not in it (JSON.stringify skips it).
  return Object.defineProperty(payload, 'wamidForTest', { value: wamid, enumerable: false }) as Json;
}

function statusPayload(phoneNumberId: string, wamid: string, status: string, recipient = customer) {
  const base: Record<string, unknown> = { id: wamid, status, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: recipient };
  if (status === 'sent' || status === 'delivered') {
    base.conversation = { id: 'c3d0d2b0e0a3f0', origin: { type: 'service' } };
    base.pricing = { billable: true, pricing_model: 'CBP', category: 'service' };
  }
  if (status === 'failed') {
    base.errors = [
      {
        code: 131047,
        title: 'Re-engagement message',
        message: 'Re-engagement message',
        error_data: { details: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.' },
      },
    ];
  }
  return envelope(phoneNumberId, { statuses: [base] });
}

// ---------------------------------------------------------------------------------------------------------------------

describe.each(targets)('WHATSAPP-BUSINESS (Cloud API) on $name', (target) => {
  describe.skipIf(!target.available)('connector and webhook', () => {
    const phoneA = '106540352242922';
    const phoneB = '113355779900112';
    let graph: FakeGraph;
    let t: TestApp;
    let receiver: Receiver;
    let hooks: FastifyInstance;
    let callbackUrl: string;
    let settings: CloudApiSettings;
    let wired = false;
    let seq = 0;

    const name = (prefix: string) => `${prefix}-${++seq}-${randomBytes(3).toString('hex')}`;

    async function startWebhookApp(services: Services, s: CloudApiSettings) {
      const app = Fastify().withTypeProvider<TypeBoxTypeProvider>();
      registerErrorHandling(app);
      // The real auth hook runs first: the routes must be reachable without any key.
      registerAuth(app, new ApiKeyCallers(services.globalApiKey, services.registry), services.registry);
      await app.register(cloudApiWebhookRoutes, {
        prefix: '/messenger',
        settings: s,
        host: services.connectorHost,
        instances: () => services.registry.all(),
        logger: services.logger,
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/messenger/webhook/meta` };
    }

    async function createMeta(phoneNumberId: string, token = metaToken) {
      const instanceName = name('meta');
      const res = await t.api('POST', 'instance/create', {
        body: {
          instanceName,
          integration: 'WHATSAPP-BUSINESS',
          token,
          number: phoneNumberId,
          businessId: '102290129340398',
          webhook: { url: `${receiver.url}/hook`, events: [] },
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      // The Meta token is not the instance key, and is never answered back.
      expect(res.body.hash.apikey).not.toBe(token);
      expect(JSON.stringify(res.body)).not.toContain(token);
      return t.services.registry.byInstanceName(instanceName)!;
    }

    /** The runtime's connector once the core builds ours for WHATSAPP-BUSINESS; until then one of ours on the same host. */
    async function connectorFor(instance: Instance, s: Partial<CloudApiSettings> = {}): Promise<Connector> {
      const attached = t.services.lifecycle.attach(instance);
      if (attached instanceof CloudApiConnector && Object.keys(s).length === 0) {
        await t.services.lifecycle.connect(instance);
        return attached;
      }
      const own = cloudApiConnectorFactory({ settings: { ...settings, ...s }, logger: silentLogger() })(instance, t.services.connectorHost);
      await own.start();
      return own;
    }

    const outbound = (content: Record<string, unknown>, extra: Partial<OutboundMessage> = {}): OutboundMessage => ({
      keyId: `3EB0${randomBytes(9).toString('hex').toUpperCase()}`,
      remoteJid: `${customer}@s.whatsapp.net`,
      messageType: Object.keys(content)[0],
      content,
      ...extra,
    });

    async function storeBlob(instance: Instance, bytes: Buffer): Promise<string> {
      const id = `blob-${randomBytes(6).toString('hex')}`;
      await t.services.store.db.insertInto('media_blobs').values({ id, instance_id: instance.id, data: bytes, created_at: Date.now() }).execute();
      return id;
    }

    const messagesOf = (instance: Instance) => t.services.store.db.selectFrom('messages').selectAll().where('instance_id', '=', instance.id).execute();

    const wamidOf = async (instance: Instance, keyId: string) => (await t.services.connectorHost.sessionKeys.get(instance.id, 'cloud-api.key', [keyId]))[keyId];

    beforeAll(async () => {
      graph = new FakeGraph(version, [phoneA, phoneB], metaToken);
      await graph.start();
      settings = { url: graph.url, version, verifyToken, appSecrets: ['old-secret-being-rotated-out', appSecret], timeoutMs: 5_000 };
      receiver = await startReceiver();
      // The settings as the service will read them once WHATSAPP-BUSINESS is wired (ignored before).
      t = await startApp(target, {
        WA_BUSINESS_URL: graph.url,
        WA_BUSINESS_VERSION: version,
        WA_BUSINESS_TOKEN_WEBHOOK: verifyToken,
        WA_BUSINESS_APP_SECRET: `old-secret-being-rotated-out,${appSecret}`,
      });
      const started = await startWebhookApp(t.services, settings);
      hooks = started.app;
      callbackUrl = started.url;
      const probe = await createMeta(phoneB);
      wired = t.services.lifecycle.attach(probe) instanceof CloudApiConnector;
    });

    afterAll(async () => {
      await hooks?.close();
      await t?.close();
      await receiver?.close();
      await graph?.close();
      expect(graph?.problems ?? []).toEqual([]);
    });

    // ---- start ----

    it('opens at start without a link step (connection.update open)', async () => {
      const instance = await createMeta(phoneA);
      await connectorFor(instance);
      expect(t.services.registry.byInstanceId(instance.id)?.status).toBe('open');
      await receiver.waitFor((events) =>
        events.some((e) => e.body.event === 'connection.update' && e.body.instance === instance.name && e.body.data.state === 'open'),
      );
    });

    // ---- sends ----

    it('sends text to /<version>/<phone-number-id>/messages with the bearer token and records the wamid', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      expect(connector.messaging.acknowledgesSynchronously).toBe(true);
      const message = outbound({ conversation: 'Hello from Switchboard' });
      await connector.messaging.send(message);
      const call = graph.messageCalls().at(-1)!;
      expect(call.path).toBe(`/${version}/${phoneA}/messages`);
      expect(call.headers.authorization).toBe(`Bearer ${metaToken}`);
      expect(call.headers['content-type']).toMatch(/^application\/json/);
      expect(call.json).toEqual({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: customer,
        type: 'text',
        text: { preview_url: false, body: 'Hello from Switchboard' },
      });
      const wamid = await wamidOf(instance, message.keyId);
      expect(graph.sent.has(wamid)).toBe(true);
      expect(connector.lastActivityAt?.()).toBeGreaterThan(Date.now() - 5000);
    });

    it('asks for a link preview when the text has a link, and replies in context with the wamid of the quoted send', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const first = outbound({ conversation: 'first' });
      await connector.messaging.send(first);
      await connector.messaging.send(
        outbound({
          extendedTextMessage: { text: 'see https://example.com/x', contextInfo: { stanzaId: first.keyId, quotedMessage: { conversation: 'first' } } },
        }),
      );
      const call = graph.messageCalls().at(-1)!;
      expect(call.json.context).toEqual({ message_id: await wamidOf(instance, first.keyId) });
      expect(call.json.text).toEqual({ preview_url: true, body: 'see https://example.com/x' });
    });

    it('uploads media to /media (multipart, messaging_product=whatsapp) and sends it by id, with caption and file name', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(64)]);
      const image = outbound(
        { imageMessage: { url: '', mimetype: 'image/png', caption: 'our logo', fileLength: String(png.length), contextInfo: {} } },
        { mediaBlobId: await storeBlob(instance, png) },
      );
      await connector.messaging.send(image);
      const upload = graph.mediaCalls().at(-1)!;
      expect(upload.path).toBe(`/${version}/${phoneA}/media`);
      expect(upload.headers.authorization).toBe(`Bearer ${metaToken}`);
      expect(upload.form?.messaging_product).toBe('whatsapp');
      expect(upload.form?.type).toBe('image/png');
      expect(upload.form?.file?.type).toBe('image/png');
      expect(upload.form?.file?.bytes.equals(png)).toBe(true);
      const sent = graph.messageCalls().at(-1)!.json;
      expect(sent.type).toBe('image');
      expect(sent.image).toEqual({ id: expect.stringMatching(/^\d+$/), caption: 'our logo' });
      expect(graph.uploads.get(sent.image.id)?.bytes.equals(png)).toBe(true);

      const pdf = Buffer.from('%PDF-1.7\n% test document\n');
      await connector.messaging.send(
        outbound(
          { documentMessage: { url: '', mimetype: 'application/pdf', fileName: 'invoice-42.pdf', caption: 'your invoice', contextInfo: {} } },
          { mediaBlobId: await storeBlob(instance, pdf) },
        ),
      );
      expect(graph.mediaCalls().at(-1)!.form?.file?.name).toBe('invoice-42.pdf');
      expect(graph.messageCalls().at(-1)!.json.document).toEqual({ id: expect.any(String), caption: 'your invoice', filename: 'invoice-42.pdf' });

      // Audio and stickers carry no caption on the Cloud API.
      await connector.messaging.send(
        outbound(
          { audioMessage: { url: '', mimetype: 'audio/mpeg', caption: 'ignored', ptt: false } },
          { mediaBlobId: await storeBlob(instance, randomBytes(32)) },
        ),
      );
      expect(graph.messageCalls().at(-1)!.json.audio).toEqual({ id: expect.any(String) });
      await connector.messaging.send(
        outbound(
          { stickerMessage: { url: '', mimetype: 'image/webp', isAnimated: false } },
          { mediaBlobId: await storeBlob(instance, Buffer.from('RIFF\0\0\0\0WEBPVP8 ')) },
        ),
      );
      expect(graph.mediaCalls().at(-1)!.form?.type).toBe('image/webp');
      expect(graph.messageCalls().at(-1)!.json).toMatchObject({ type: 'sticker', sticker: { id: expect.any(String) } });
    });

    it('retries a media send without uploading again (Graph 500 is transient)', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const video = outbound({ videoMessage: { url: '', mimetype: 'video/mp4', caption: '' } }, { mediaBlobId: await storeBlob(instance, randomBytes(128)) });
      const uploadsBefore = graph.mediaCalls().length;
      graph.answerNext(new RegExp(`/${phoneA}/messages$`), graphError(500, 131000, 'Something went wrong', 'Something went wrong'));
      await expect(connector.messaging.send(video)).rejects.toBeInstanceOf(TransientConnectorError);
      await connector.messaging.send(video);
      expect(graph.mediaCalls().length).toBe(uploadsBefore + 1);
      expect(graph.messageCalls().at(-1)!.json.video).toEqual({ id: expect.any(String) });
    });

    it('sends a listMessage as an interactive list', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      await connector.messaging.send(
        outbound({
          listMessage: {
            title: 'Our menu',
            description: 'Pick what you would like',
            buttonText: 'See options',
            footerText: 'Prices include VAT',
            listType: 2,
            sections: [
              {
                title: 'Drinks',
                rows: [
                  { title: 'Coffee', description: 'Fresh, hot', rowId: 'coffee' },
                  { title: 'Tea', rowId: 'tea' },
                ],
              },
              { title: 'Food', rows: [{ title: 'Cake', description: 'Chocolate', rowId: 'cake' }] },
            ],
          },
        }),
      );
      expect(graph.messageCalls().at(-1)!.json).toEqual({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: customer,
        type: 'interactive',
        interactive: {
          type: 'list',
          header: { type: 'text', text: 'Our menu' },
          body: { text: 'Pick what you would like' },
          footer: { text: 'Prices include VAT' },
          action: {
            button: 'See options',
            sections: [
              {
                title: 'Drinks',
                rows: [
                  { id: 'coffee', title: 'Coffee', description: 'Fresh, hot' },
                  { id: 'tea', title: 'Tea' },
                ],
              },
              { title: 'Food', rows: [{ id: 'cake', title: 'Cake', description: 'Chocolate' }] },
            ],
          },
        },
      });
    });

    it('refuses a list beyond Meta limits with a 400 naming each field, without calling Graph', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const before = graph.calls.length;
      const error = await connector.messaging
        .send(
          outbound({
            listMessage: {
              title: 'T',
              description: 'D',
              buttonText: 'A button text that is far too long',
              footerText: '',
              sections: [
                { title: 'Same', rows: [{ title: 'A row title longer than twenty-four', rowId: 'a' }] },
                { title: 'Same', rows: Array.from({ length: 10 }, (_, i) => ({ title: `r${i}`, rowId: `r${i}` })) },
              ],
            },
          }),
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      const refusal = error as ProviderError;
      expect(statusOf(refusal)).toBe(400);
      expect(refusal.messages).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^buttonText must be at most 20 characters on WHATSAPP-BUSINESS/),
          expect.stringMatching(/^sections\[0\]\.rows\[0\]\.title must be at most 24 characters/),
          expect.stringMatching(/^sections\[1\]\.title "Same" is used twice/),
          expect.stringMatching(/11 rows; WHATSAPP-BUSINESS allows at most 10 rows/),
        ]),
      );
      expect(graph.calls.length).toBe(before);
    });

    it('sends a buttons message as interactive reply buttons (every type becomes reply), refusing what Meta would', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const built = buttonsContent(
        {
          title: 'Pay',
          description: 'Your order',
          footer: 'Shop',
          buttons: [
            { type: 'copy', displayText: 'Copy code', copyCode: 'ABC-123' },
            { type: 'url', displayText: 'Open', url: 'https://shop.example' },
            { type: 'call', displayText: 'Call', phoneNumber: '+4915100000000' },
          ],
        },
        {},
      );
      await connector.messaging.send(outbound(built.content));
      expect(graph.messageCalls().at(-1)!.json).toEqual({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: customer,
        type: 'interactive',
        interactive: {
          type: 'button',
          body: { text: '*Pay*\n\nYour order' },
          footer: { text: 'Shop' },
          action: {
            buttons: [
              { type: 'reply', reply: { id: 'ABC-123', title: 'Copy code' } },
              { type: 'reply', reply: { id: 'https://shop.example', title: 'Open' } },
              { type: 'reply', reply: { id: '+4915100000000', title: 'Call' } },
            ],
          },
        },
      });

      const before = graph.calls.length;
      const refusal = (content: Record<string, unknown>) =>
        Promise.resolve()
          .then(() => connector.messaging.check!({ remoteJid: `${customer}@s.whatsapp.net`, content }))
          .catch((e: unknown) => e as ProviderError);
      const url = (text: string) => ({ type: 'url' as const, displayText: text, url: 'https://same.example' });
      const repeated = await refusal(buttonsContent({ title: 'T', buttons: [url('Same'), url('Same')] }, {}).content);
      expect(statusOf(repeated as ProviderError)).toBe(400);
      expect((repeated as ProviderError).messages).toEqual(['Button texts cannot be repeated', 'Button IDs cannot be repeated.']);
      const four = await refusal(buttonsContent({ title: 'T', buttons: ['a', 'b', 'c', 'd'].map(url) }, {}).content);
      expect((four as ProviderError).messages).toEqual(
        expect.arrayContaining([expect.stringMatching(/^buttons must have at most 3 buttons on WHATSAPP-BUSINESS/)]),
      );
      const long = await refusal(
        buttonsContent({ title: 'T', buttons: [{ type: 'reply', displayText: 'A text far too long for Meta', id: 'x' }] }, {}).content,
      );
      expect((long as ProviderError).messages).toEqual([expect.stringMatching(/^buttons\[0\]\.displayText must be at most 20 characters/)]);
      const pix = await refusal(
        buttonsContent({ buttons: [{ type: 'pix', currency: 'BRL', name: 'Loja', keyType: 'email', key: 'a@b.example' }] }, {}).content,
      );
      expect((pix as ProviderError).messages).toEqual([
        'Method not available on WhatsApp Business API (integration WHATSAPP-BUSINESS cannot send PIX buttons)',
      ]);
      expect(graph.calls.length).toBe(before);
    });

    it('reacts to a sent message by its wamid, and marks received messages read', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const first = outbound({ conversation: 'react to me' });
      await connector.messaging.send(first);
      await connector.messaging.send(outbound({ reactionMessage: { key: { remoteJid: first.remoteJid, fromMe: true, id: first.keyId }, text: '👍' } }));
      expect(graph.messageCalls().at(-1)!.json).toMatchObject({
        type: 'reaction',
        reaction: { message_id: await wamidOf(instance, first.keyId), emoji: '👍' },
      });
      const received = inboundWamid();
      await connector.messaging.markRead([{ remoteJid: first.remoteJid, keyId: received }]);
      expect(graph.messageCalls().at(-1)!.json).toEqual({ messaging_product: 'whatsapp', status: 'read', message_id: received });
    });

    it('sends locations (a quote as context) and contact cards as Graph contacts read from the vCards', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const first = outbound({ conversation: 'where are you?' });
      await connector.messaging.send(first);
      await connector.messaging.send(
        outbound({
          locationMessage: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Shop', address: 'Main St 1', contextInfo: { stanzaId: first.keyId } },
        }),
      );
      expect(graph.messageCalls().at(-1)!.json).toMatchObject({
        type: 'location',
        location: { latitude: 52.52, longitude: 13.405, name: 'Shop', address: 'Main St 1' },
        context: { message_id: await wamidOf(instance, first.keyId) },
      });
      const vcard = (name: string, waid: string, extra: string[] = []) =>
        ['BEGIN:VCARD', 'VERSION:3.0', `N:${name}`, `FN:${name}`, ...extra, `item1.TEL;waid=${waid}:+${waid}`, 'item1.X-ABLabel:Celular', 'END:VCARD'].join(
          '\n',
        );
      await connector.messaging.send(
        outbound({ contactMessage: { displayName: 'Ana Lima', vcard: vcard('Ana Lima', '5511999990000', ['ORG:Acme;', 'EMAIL:ana@example.com']) } }),
      );
      expect(graph.messageCalls().at(-1)!.json).toMatchObject({
        type: 'contacts',
        contacts: [
          {
            name: { formatted_name: 'Ana Lima', first_name: 'Ana Lima' },
            phones: [{ phone: '+5511999990000', wa_id: '5511999990000' }],
            emails: [{ email: 'ana@example.com' }],
            org: { company: 'Acme' },
          },
        ],
      });
      await connector.messaging.send(
        outbound({
          contactsArrayMessage: {
            displayName: '2 contacts',
            contacts: [
              { displayName: 'Ana', vcard: vcard('Ana', '5511999990000') },
              { displayName: 'Bo', vcard: vcard('Bo', '4915100000001') },
            ],
          },
        }),
      );
      const sent = graph.messageCalls().at(-1)!.json;
      expect(sent.type).toBe('contacts');
      expect(sent.contacts.map((c: Json) => c.phones[0].wa_id)).toEqual(['5511999990000', '4915100000001']);
      expect(sent.contacts[0]).not.toHaveProperty('emails');
    });

    it('turns Graph refusals into ProviderError 400 with Meta code and message (never a success)', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      graph.allowed = new Set(['4915100000000']);
      try {
        const error = await connector.messaging.send(outbound({ conversation: 'hi' })).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ProviderError);
        expect(statusOf(error as ProviderError)).toBe(400);
        expect((error as ProviderError).messages).toEqual([
          'Meta error 131030: Recipient phone number not in allowed list',
          'Recipient phone number not in allowed list: Add recipient phone number to recipient list and try again.',
        ]);
      } finally {
        graph.allowed = null;
      }

      const badToken = await createMeta(phoneA, 'EAAG-not-a-valid-token');
      const refused = await (await connectorFor(badToken)).messaging.send(outbound({ conversation: 'hi' })).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ProviderError);
      expect(statusOf(refused as ProviderError)).toBe(400);
      expect((refused as ProviderError).messages[0]).toBe('Meta error 190: Invalid OAuth access token - Cannot parse access token');

      const wrongNumber = await createMeta('999999999999999');
      const unknown = await (await connectorFor(wrongNumber)).messaging.send(outbound({ conversation: 'hi' })).catch((e: unknown) => e);
      expect((unknown as ProviderError).messages[0]).toMatch(/^Meta error 100 \(subcode 33\): Unsupported post request\. Object with ID '999999999999999'/);
    });

    it('treats throughput limits, 5xx, unreachable Graph and timeouts as transient', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      graph.answerNext(/\/messages$/, graphError(400, 130429, 'Rate limit hit', 'Cloud API message throughput has been reached.'));
      const limited = await connector.messaging.send(outbound({ conversation: 'hi' })).catch((e: unknown) => e);
      expect(limited).toBeInstanceOf(TransientConnectorError);
      expect((limited as Error).message).toMatch(/^Meta error 130429: Rate limit hit/);

      graph.answerNext(/\/messages$/, { status: 503, body: { error: { message: 'Service temporarily unavailable', code: 2, type: 'OAuthException' } } });
      await expect(connector.messaging.send(outbound({ conversation: 'hi' }))).rejects.toBeInstanceOf(TransientConnectorError);

      const slow = await connectorFor(instance, { timeoutMs: 200 });
      graph.answerNext(/\/messages$/, { status: 200, body: {}, delayMs: 1000 });
      const timedOut = await slow.messaging.send(outbound({ conversation: 'hi' })).catch((e: unknown) => e);
      expect(timedOut).toBeInstanceOf(TransientConnectorError);
      expect((timedOut as Error).message).toBe('Meta Graph API did not answer within 200 ms');

      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const unreachable = await (await connectorFor(instance, { url: deadUrl })).messaging.send(outbound({ conversation: 'hi' })).catch((e: unknown) => e);
      expect(unreachable).toBeInstanceOf(TransientConnectorError);
      expect((unreachable as Error).message).toMatch(/^Meta Graph API unreachable: ECONNREFUSED/);
    });

    it('answers what the Cloud API cannot do with a 400 naming the integration', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const before = graph.calls.length;
      const poll = await connector.messaging
        .send(outbound({ pollCreationMessage: { name: 'Lunch?', options: [{ optionName: 'yes' }, { optionName: 'no' }], selectableOptionsCount: 1 } }))
        .catch((e: unknown) => e);
      expect(poll).toBeInstanceOf(ProviderError);
      expect((poll as ProviderError).messages).toEqual(['Method not available on WhatsApp Business API (integration WHATSAPP-BUSINESS cannot send polls)']);
      const status = await connector.messaging.send(outbound({ conversation: 'status' }, { remoteJid: 'status@broadcast' })).catch((e: unknown) => e);
      expect((status as ProviderError).messages[0]).toMatch(/WHATSAPP-BUSINESS cannot post statuses/);
      const group = await connector.messaging.send(outbound({ conversation: 'hi all' }, { remoteJid: '120363025246125486@g.us' })).catch((e: unknown) => e);
      expect((group as ProviderError).messages[0]).toMatch(/WHATSAPP-BUSINESS cannot send to group chats/);
      // No privacy module: the kind's capabilities say so, and the API refuses before any connector is asked.
      expect(() => t.services.kinds.assertCan(instance, 'privacy')).toThrow(UnsupportedOperationError);
      // A send's delay calls for typing; the Cloud API has none, so that is a quiet no-op.
      await expect(Promise.resolve(connector.presence?.sendPresence(`${customer}@s.whatsapp.net`, 'composing'))).resolves.toBeUndefined();
      expect(graph.calls.length).toBe(before);
    });

    // ---- webhook: verification ----

    it('answers the verification handshake with the challenge for the right verify token only', async () => {
      const ok = await fetch(`${callbackUrl}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=1158201444`);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await ok.text()).toBe('1158201444');

      const wrong = await fetch(`${callbackUrl}?hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1158201444`);
      expect(wrong.status).toBe(403);
      const body = (await wrong.json()) as Json;
      expect(body).toMatchObject({ status: 403, error: 'Forbidden', response: { message: [expect.stringMatching(/hub\.verify_token does not match/)] } });
      expect(JSON.stringify(body)).not.toContain('1158201444');

      expect((await fetch(`${callbackUrl}?hub.mode=unsubscribe&hub.verify_token=${verifyToken}&hub.challenge=1`)).status).toBe(400);
      expect((await fetch(`${callbackUrl}?hub.mode=subscribe&hub.verify_token=${verifyToken}`)).status).toBe(400);
    });

    // ---- webhook: inbound ----

    it('stores a signed inbound message for the instance whose phone-number id matches (messages.upsert)', async () => {
      const a = await createMeta(phoneA);
      const b = await createMeta(phoneB);
      const payload = inboundPayload(phoneB, { type: 'text', text: { body: 'Hi, is the shop open today?' } });
      const wamid = payload.wamidForTest as string;
      const res = await graph.play(callbackUrl, payload);
      expect(res.status).toBe(200);
      const stored = await messagesOf(b);
      const row = stored.find((m) => m.key_id === wamid)!;
      expect(row).toMatchObject({ remote_jid: `${customer}@s.whatsapp.net`, from_me: 0, push_name: 'Kim Customer', message_type: 'conversation' });
      expect(JSON.parse(row.content)).toEqual({ conversation: 'Hi, is the shop open today?' });
      expect((await messagesOf(a)).some((m) => m.key_id === wamid)).toBe(false);
      await receiver.waitFor((events) => events.some((e) => e.body.event === 'messages.upsert' && e.body.instance === b.name && e.body.data.key.id === wamid));
      const upsert = receiver.of('messages.upsert', b.name).find((e) => e.body.data.key.id === wamid)!;
      expect(upsert.body.data).toMatchObject({
        key: { remoteJid: `${customer}@s.whatsapp.net`, fromMe: false, id: wamid },
        pushName: 'Kim Customer',
        message: { conversation: 'Hi, is the shop open today?' },
        messageType: 'conversation',
      });
      expect(receiver.of('messages.upsert', a.name).some((e) => e.body.data.key.id === wamid)).toBe(false);

      // Meta redelivers until it gets a 200: the same message is stored and announced once.
      expect((await graph.play(callbackUrl, payload)).status).toBe(200);
      expect((await messagesOf(b)).filter((m) => m.key_id === wamid)).toHaveLength(1);
    });

    it('refuses unsigned, wrongly signed and tampered deliveries with 401 and stores nothing', async () => {
      const instance = await createMeta(phoneB);
      const attempts = [
        { signature: null, message: /X-Hub-Signature-256 header is required/ },
        { signature: 'sha1=abcdef', message: /must look like sha256=/ },
        { secret: 'not-the-app-secret', message: /does not match the body/ },
        { tamper: true, message: /does not match the body/ },
      ];
      const refusedIds: string[] = [];
      for (const attempt of attempts) {
        const payload = inboundPayload(phoneB, { type: 'text', text: { body: 'Transfer the money now' } });
        refusedIds.push(payload.wamidForTest as string);
        const res = await graph.play(callbackUrl, payload, attempt);
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ status: 401, error: 'Unauthorized', response: { message: [expect.stringMatching(attempt.message)] } });
      }
      const stored = await messagesOf(instance);
      expect(stored.filter((m) => refusedIds.includes(m.key_id))).toEqual([]);
      // A valid delivery afterwards arrives; none of the refused ones ever does.
      const valid = inboundPayload(phoneB, { type: 'text', text: { body: 'the real one' } });
      const validId = valid.wamidForTest as string;
      expect((await graph.play(callbackUrl, valid)).status).toBe(200);
      await receiver.waitFor((events) => events.some((e) => e.body.event === 'messages.upsert' && e.body.data.key.id === validId));
      expect(receiver.events.filter((e) => refusedIds.includes(e.body.data?.key?.id))).toEqual([]);
    });

    it('refuses every delivery while no app secret is configured (fails closed)', async () => {
      const unconfigured = await startWebhookApp(t.services, { ...settings, appSecrets: [] });
      try {
        const res = await graph.play(unconfigured.url, inboundPayload(phoneB, { type: 'text', text: { body: 'x' } }));
        expect(res.status).toBe(503);
        expect(res.body.response.message[0]).toMatch(/WA_BUSINESS_APP_SECRET is not configured/);
      } finally {
        await unconfigured.app.close();
      }
    });

    it('maps media, replies, list answers, reactions and locations to WhatsApp shapes', async () => {
      const instance = await createMeta(phoneB);
      const connector = await connectorFor(instance);
      const ours = outbound({ conversation: 'Which size?' });
      await connector.messaging.send(ours);
      const ourWamid = await wamidOf(instance, ours.keyId);
      const cases: [Record<string, unknown>, string, Record<string, unknown>][] = [
        [
          { type: 'image', image: { caption: 'my receipt', mime_type: 'image/jpeg', sha256: 'aGVsbG8=', id: '1479537139650973' } },
          'imageMessage',
          { imageMessage: { mimetype: 'image/jpeg', mediaId: '1479537139650973', fileSha256: 'aGVsbG8=', caption: 'my receipt' } },
        ],
        [
          { type: 'document', document: { filename: 'cv.pdf', mime_type: 'application/pdf', sha256: 'x', id: '2' } },
          'documentMessage',
          { documentMessage: { mimetype: 'application/pdf', mediaId: '2', fileSha256: 'x', fileName: 'cv.pdf' } },
        ],
        [
          { type: 'audio', audio: { mime_type: 'audio/ogg; codecs=opus', id: '3', voice: true } },
          'audioMessage',
          { audioMessage: { mimetype: 'audio/ogg; codecs=opus', mediaId: '3', ptt: true } },
        ],
        [
          { type: 'text', text: { body: 'Large, please' }, context: { from: '15550783881', id: ourWamid } },
          'extendedTextMessage',
          { extendedTextMessage: { text: 'Large, please', contextInfo: { stanzaId: ours.keyId, participant: '15550783881@s.whatsapp.net' } } },
        ],
        [
          {
            type: 'interactive',
            interactive: { type: 'list_reply', list_reply: { id: 'coffee', title: 'Coffee', description: 'Fresh, hot' } },
            context: { from: '15550783881', id: ourWamid },
          },
          'listResponseMessage',
          {
            listResponseMessage: {
              title: 'Coffee',
              description: 'Fresh, hot',
              listType: 'SINGLE_SELECT',
              singleSelectReply: { selectedRowId: 'coffee' },
              contextInfo: { stanzaId: ours.keyId, participant: '15550783881@s.whatsapp.net' },
            },
          },
        ],
        [
          { type: 'reaction', reaction: { message_id: ourWamid, emoji: '❤️' } },
          'reactionMessage',
          { reactionMessage: { key: { remoteJid: `${customer}@s.whatsapp.net`, fromMe: true, id: ours.keyId }, text: '❤️' } },
        ],
        [
          { type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Shop', address: 'Main St 1' } },
          'locationMessage',
          { locationMessage: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Shop', address: 'Main St 1' } },
        ],
      ];
      for (const [message, messageType, content] of cases) {
        const payload = inboundPayload(phoneB, message);
        const wamid = payload.wamidForTest as string;
        expect((await graph.play(callbackUrl, payload)).status).toBe(200);
        const row = (await messagesOf(instance)).find((m) => m.key_id === wamid)!;
        expect(row.message_type, messageType).toBe(messageType);
        expect(JSON.parse(row.content)).toEqual(content);
      }
    });

    it('getBase64FromMediaMessage downloads received media by its Meta media id (Graph lookup, then the URL with the token)', async () => {
      const instance = await createMeta(phoneB);
      await connectorFor(instance);
      const jpeg = Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(100)]);
      const mediaId = '1479537139650974';
      graph.uploads.set(mediaId, { bytes: jpeg, type: 'image/jpeg' });
      const payload = inboundPayload(phoneB, { type: 'image', image: { caption: 'the receipt', mime_type: 'image/jpeg', sha256: 'x', id: mediaId } });
      expect((await graph.play(callbackUrl, payload)).status).toBe(200);
      const wamid = payload.wamidForTest as string;
      const res = await t.api('POST', `chat/getBase64FromMediaMessage/${instance.name}`, { body: { message: { key: { id: wamid } } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({
        mediaType: 'imageMessage',
        caption: 'the receipt',
        mimetype: 'image/jpeg',
        size: { fileLength: jpeg.length },
        buffer: null,
      });
      expect(Buffer.from(res.body.base64, 'base64').equals(jpeg)).toBe(true);
      const gets = graph.calls.filter((c) => c.method === 'GET');
      expect(gets.map((c) => c.path)).toEqual([`/${version}/${mediaId}`, `/media-file/${mediaId}`]);
      expect(gets.every((c) => c.headers.authorization === `Bearer ${metaToken}`)).toBe(true);

      // Media Meta no longer has is its refusal (400); media without a media id cannot be downloaded.
      graph.uploads.delete(mediaId);
      const gone = await t.api('POST', `chat/getBase64FromMediaMessage/${instance.name}`, { body: { message: { key: { id: wamid } } } });
      expect(gone.status, JSON.stringify(gone.body)).toBe(400);
      const noId = await t.api('POST', `chat/getBase64FromMediaMessage/${instance.name}`, {
        body: { message: { key: { id: 'X' }, message: { imageMessage: { mimetype: 'image/jpeg' } } } },
      });
      expect(noId.status).toBe(400);
      expect(noId.body.response.message[0]).toMatch(/no Meta media id/);
      // Deleting, editing and blocking are not in the Cloud API.
      const blocked = await t.api('POST', `chat/updateBlockStatus/${instance.name}`, { body: { number: customer, status: 'block' } });
      expect(blocked.status).toBe(400);
      expect(blocked.body.response.message[0]).toMatch(/^Method not available on WhatsApp Business API/);
    });

    /** The PENDING record the send route would have stored for `message` (tests that drive the connector directly). */
    async function storeSentRecord(instance: Instance, message: OutboundMessage) {
      await t.services.store.db
        .insertInto('messages')
        .values({
          id: `m-${randomBytes(6).toString('hex')}`,
          instance_id: instance.id,
          key_id: message.keyId,
          remote_jid: message.remoteJid,
          from_me: 1,
          participant: null,
          push_name: null,
          message_type: 'conversation',
          content: JSON.stringify(message.content),
          status: 'PENDING',
          message_timestamp: Math.floor(Date.now() / 1000),
          source: 'web',
          idempotency_key: null,
          request_hash: null,
          created_at: Date.now(),
          updated_at: Date.now(),
        })
        .execute();
    }

    // ---- webhook: statuses ----

    it('turns statuses of a sent message into messages.update SERVER_ACK → DELIVERY_ACK → READ', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const apikey = t.services.registry.apikeyOf(instance);
      const sent = await t.api('POST', `message/sendText/${instance.name}`, { key: apikey, body: { number: customer, text: 'Your order has shipped' } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      const keyId: string = sent.body.key.id;
      if (!wired) {
        // Until the core builds our connector, deliver the queued send through ours by hand, as the worker would.
        const row = await t.services.store.db.selectFrom('send_queue').select('payload').where('instance_id', '=', instance.id).executeTakeFirstOrThrow();
        await connector.messaging.send(JSON.parse(row.payload).outbound as OutboundMessage);
      }
      const wamid = await waitFor(() => wamidOf(instance, keyId));
      expect(graph.sent.get(wamid)).toMatchObject({ to: customer, text: { body: 'Your order has shipped' } });

      for (const status of ['sent', 'delivered', 'read']) {
        expect((await graph.play(callbackUrl, statusPayload(phoneA, wamid, status))).status).toBe(200);
      }
      const statuses = () =>
        receiver
          .of('messages.update', instance.name)
          .filter((e) => e.body.data.keyId === keyId)
          .map((e) => e.body.data.status as string);
      await waitFor(() => statuses().includes('READ'));
      expect(statuses()).toEqual(['SERVER_ACK', 'DELIVERY_ACK', 'READ']);
      const update = receiver.of('messages.update', instance.name).find((e) => e.body.data.keyId === keyId)!;
      expect(update.body.data).toMatchObject({ keyId, remoteJid: `${customer}@s.whatsapp.net`, fromMe: true, instanceId: instance.id });
      const stored = (await messagesOf(instance)).find((m) => m.key_id === keyId)!;
      expect(stored.status).toBe('READ');

      // A late or repeated receipt never steps a message back.
      expect((await graph.play(callbackUrl, statusPayload(phoneA, wamid, 'delivered'))).status).toBe(200);
      expect((await messagesOf(instance)).find((m) => m.key_id === keyId)!.status).toBe('READ');
    });

    it("applies a receipt that arrives before Graph answered the send, and carries Meta's reason with an ERROR", async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const message = outbound({ conversation: 'raced by its receipt' });
      await storeSentRecord(instance, message);
      const wamid = `wamid.EARLY${randomBytes(6).toString('hex').toUpperCase()}`;
      graph.answerNext(/\/messages$/, {
        status: 200,
        body: { messaging_product: 'whatsapp', contacts: [{ input: customer, wa_id: customer }], messages: [{ id: wamid }] },
        delayMs: 800,
      });
      const sending = connector.messaging.send(message);
      await sleep(200);
      // Meta's receipt overtakes its own answer to the send.
      expect((await graph.play(callbackUrl, statusPayload(phoneA, wamid, 'failed'))).status).toBe(200);
      await sending;
      await receiver.waitFor((events) =>
        events.some((e) => e.body.event === 'messages.update' && e.body.data.keyId === message.keyId && e.body.data.status === 'ERROR'),
      );
      const update = receiver.of('messages.update', instance.name).find((e) => e.body.data.keyId === message.keyId && e.body.data.status === 'ERROR')!;
      expect(JSON.stringify(update.body.data)).toContain('131047');
    });

    it('turns a failed status into ERROR and ignores receipts of messages it did not send', async () => {
      const instance = await createMeta(phoneA);
      const connector = await connectorFor(instance);
      const message = outbound({ conversation: 'after 24 hours' });
      await storeSentRecord(instance, message);
      await connector.messaging.send(message);
      const wamid = (await wamidOf(instance, message.keyId))!;
      expect((await graph.play(callbackUrl, statusPayload(phoneA, wamid, 'failed'))).status).toBe(200);
      await receiver.waitFor((events) =>
        events.some((e) => e.body.event === 'messages.update' && e.body.data.keyId === message.keyId && e.body.data.status === 'ERROR'),
      );
      const foreign = await graph.play(callbackUrl, statusPayload(phoneA, 'wamid.NOT-OURS', 'read'));
      expect(foreign).toMatchObject({ status: 200, body: { statuses: 0 } });
      const unknownNumber = await graph.play(callbackUrl, inboundPayload('123123123123', { type: 'text', text: { body: 'to nobody' } }));
      expect(unknownNumber).toMatchObject({ status: 200, body: { messages: 0 } });
    });

    // ---- through the API, once the core builds this connector for WHATSAPP-BUSINESS ----

    it('through the API: a refused send repeated with its Idempotency-Key is answered the same refusal, not sent again', async (ctx) => {
      if (!wired) ctx.skip();
      const instance = await createMeta(phoneA);
      await t.services.lifecycle.connect(instance);
      const apikey = t.services.registry.apikeyOf(instance);
      graph.allowed = new Set(['4915100000000']);
      try {
        const body = { number: customer, text: 'refused once' };
        const headers = { 'Idempotency-Key': 'refused-1' };
        const first = await t.api('POST', `message/sendText/${instance.name}`, { key: apikey, body, headers });
        expect(first.status).toBe(400);
        const calls = graph.messageCalls().length;
        const again = await t.api('POST', `message/sendText/${instance.name}`, { key: apikey, body, headers });
        expect(again.status).toBe(400);
        expect(again.body.response.message[0]).toContain('131030');
        expect(graph.messageCalls().length).toBe(calls);
      } finally {
        graph.allowed = null;
      }
    });

    it('through the API: a send Graph could never take is refused before it is stored or announced', async (ctx) => {
      if (!wired) ctx.skip();
      const instance = await createMeta(phoneA);
      await t.services.lifecycle.connect(instance);
      const apikey = t.services.registry.apikeyOf(instance);
      const before = graph.messageCalls().length;
      const group = await t.api('POST', `message/sendText/${instance.name}`, { key: apikey, body: { number: '120363025555555555@g.us', text: 'to a group' } });
      expect(group.status).toBe(400);
      const rows = Array.from({ length: 11 }, (_, i) => ({ title: `row ${i}` }));
      const list = await t.api('POST', `message/sendList/${instance.name}`, {
        key: apikey,
        body: { number: customer, title: 'Menu', buttonText: 'Open', values: [{ title: 'All', rows }] },
      });
      expect(list.status).toBe(400);
      const stored = await t.services.store.db.selectFrom('messages').select('id').where('instance_id', '=', instance.id).execute();
      expect(stored).toEqual([]);
      const announced = await t.services.store.db
        .selectFrom('outbox')
        .select('event')
        .where('instance_id', '=', instance.id)
        .where('event', 'in', ['SEND_MESSAGE', 'MESSAGES_UPDATE'])
        .execute();
      expect(announced).toEqual([]);
      expect(graph.messageCalls().length).toBe(before);
    });

    it('through the API: a Graph outage on markMessageAsRead is a 503 to retry; a delayed or unlinked send is answered at once', async (ctx) => {
      if (!wired) ctx.skip();
      const instance = await createMeta(phoneA);
      await t.services.lifecycle.connect(instance);
      const apikey = t.services.registry.apikeyOf(instance);
      graph.answerNext(new RegExp(`/${phoneA}/messages$`), graphError(500, 131000, 'Something went wrong', 'Something went wrong'));
      const read = await t.api('POST', `chat/markMessageAsRead/${instance.name}`, {
        key: apikey,
        body: { readMessages: [{ remoteJid: `${customer}@s.whatsapp.net`, fromMe: false, id: 'wamid.SOMEONE' }] },
      });
      expect(read.status, JSON.stringify(read.body)).toBe(503);
      expect(read.body.response.message[0]).toMatch(/try again shortly/);
      // A typing delay is waited out by the queue, not by the request.
      const started = Date.now();
      const delayed = await t.api('POST', `message/sendText/${instance.name}`, { key: apikey, body: { number: customer, text: 'typed slowly', delay: 3000 } });
      expect(delayed.status).toBe(201);
      expect(delayed.body.status).toBe('PENDING');
      expect(Date.now() - started).toBeLessThan(2000);
      await waitFor(() => graph.messageCalls().some((c) => c.json?.text?.body === 'typed slowly'), 10_000);
      // Logged out: the send waits in the queue, the request does not.
      expect((await t.api('DELETE', `instance/logout/${instance.name}`, { key: apikey })).status).toBe(200);
      const whileOut = Date.now();
      const queued = await t.api('POST', `message/sendText/${instance.name}`, { key: apikey, body: { number: customer, text: 'while logged out' } });
      expect(queued.status).toBe(201);
      expect(Date.now() - whileOut).toBeLessThan(2000);
    });

    it('through the API: a voice note is converted, uploaded to /media as audio/ogg and sent by id with voice true; sendPtv is not available', async (ctx) => {
      if (!wired) ctx.skip();
      const instance = await createMeta(phoneA);
      await t.services.lifecycle.connect(instance);
      const apikey = t.services.registry.apikeyOf(instance);
      const res = await t.api('POST', `message/sendWhatsAppAudio/${instance.name}`, {
        key: apikey,
        body: { number: customer, audio: (await sine('wav')).toString('base64') },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.message.audioMessage).toMatchObject({ ptt: true, seconds: 2, mimetype: 'audio/ogg; codecs=opus' });
      const sent = graph.messageCalls().find((c) => c.json?.type === 'audio' && c.json.to === customer && c.json.audio.voice === true)?.json;
      expect(sent?.audio).toEqual({ id: expect.stringMatching(/^\d+$/), voice: true });
      const uploaded = graph.uploads.get(sent.audio.id)!;
      expect(uploaded.type).toBe('audio/ogg');
      expect(isOggOpus(uploaded.bytes)).toBe(true);

      const ptv = await t.api('POST', `message/sendPtv/${instance.name}`, {
        key: apikey,
        body: { number: customer, video: (await sine('wav')).toString('base64') },
      });
      expect(ptv.status).toBe(400);
      expect(ptv.body.response.message[0]).toMatch(/^Method not available on WhatsApp Business API/);
    });

    it('through the API: sendButtons answers 201 with the record and reaches Graph as reply buttons; repeats are a 400, nothing stored', async (ctx) => {
      if (!wired) ctx.skip();
      const instance = await createMeta(phoneA);
      await t.services.lifecycle.connect(instance);
      const apikey = t.services.registry.apikeyOf(instance);
      const ok = await t.api('POST', `message/sendButtons/${instance.name}`, {
        key: apikey,
        body: {
          number: customer,
          title: 'Table for two?',
          buttons: [
            { type: 'reply', displayText: 'Yes', id: 'book-yes' },
            { type: 'reply', displayText: 'No', id: 'book-no' },
          ],
        },
      });
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
      expect(ok.body.messageType).toBe('viewOnceMessage');
      const call = graph.messageCalls().find((c) => c.json?.interactive?.body?.text === '*Table for two?*');
      expect(call?.json.interactive).toEqual({
        type: 'button',
        body: { text: '*Table for two?*' },
        action: {
          buttons: [
            { type: 'reply', reply: { id: 'book-yes', title: 'Yes' } },
            { type: 'reply', reply: { id: 'book-no', title: 'No' } },
          ],
        },
      });
      const before = await messagesOf(instance);
      const repeated = await t.api('POST', `message/sendButtons/${instance.name}`, {
        key: apikey,
        body: {
          number: customer,
          title: 'Again',
          buttons: [
            { type: 'url', displayText: 'Open', url: 'https://a.example' },
            { type: 'url', displayText: 'Open', url: 'https://a.example' },
          ],
        },
      });
      expect(repeated.status).toBe(400);
      expect(repeated.body.response.message).toEqual(['Button texts cannot be repeated', 'Button IDs cannot be repeated.']);
      expect(await messagesOf(instance)).toHaveLength(before.length);
    });

    it('through the API: sendText reaches Graph; a Graph refusal answers the error envelope, never 201', async (ctx) => {
      if (!wired) ctx.skip();
      const instance = await createMeta(phoneA);
      await t.services.lifecycle.connect(instance);
      const apikey = t.services.registry.apikeyOf(instance);
      const ok = await t.api('POST', `message/sendText/${instance.name}`, { key: apikey, body: { number: customer, text: 'via the API' } });
      expect(ok.status).toBe(201);
      await waitFor(() => graph.messageCalls().some((c) => c.json?.text?.body === 'via the API'));
      graph.allowed = new Set(['4915100000000']);
      try {
        const refused = await t.api('POST', `message/sendText/${instance.name}`, { key: apikey, body: { number: customer, text: 'not allowed' } });
        expect(refused.status).toBe(400);
        expect(refused.body).toEqual({
          status: 400,
          error: 'Bad Request',
          response: { message: ['Meta error 131030: Recipient phone number not in allowed list', expect.any(String)] },
        });
      } finally {
        graph.allowed = null;
      }
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: name('meta-answer'), integration: 'WHATSAPP-BUSINESS', token: metaToken, number: phoneA },
      });
      expect(created.body.instance.webhook_wa_business).toBe(`${t.url}/messenger/webhook/meta`);
      expect(created.body.instance.access_token_wa_business).toBe(verifyToken);
    });
  });
});
