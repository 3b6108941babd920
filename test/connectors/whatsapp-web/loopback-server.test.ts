// The WhatsApp Web connector's wiring against a loopback WhatsApp Web server: real baileys, real SQLite store.
//
// The server below speaks the real protocol (Noise XX handshake, WhatsApp binary nodes) with its own certificate
// chain: the test trusts it by swapping baileys' root key (WA_CERT_DETAILS.PUBLIC_KEY) for the test's own, as a
// test CA would. A "phone" side scans QR codes the way WhatsApp's app does (it reads the keys in the QR and answers
// with a signed device identity), so linking, login, restarts and logouts run through baileys unchanged.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  Curve,
  NOISE_MODE,
  NOISE_WA_HEADER,
  WA_ADV_ACCOUNT_SIG_PREFIX,
  WA_CERT_DETAILS,
  decodeBinaryNode,
  encodeBinaryNode,
  getBinaryNodeChild,
  hmacSign,
  proto,
  type BinaryNode,
} from 'baileys';
import { loadConfig } from '../../../src/platform/config.js';
import { createLogger, silentLogger, type Logger } from '../../../src/platform/logger.js';
import { openStore, type Store } from '../../../src/platform/store/db.js';
import { storeTargets, type StoreTarget } from '../../support/harness.js';
import { sleep, waitFor } from '../../support/wait.js';
import { RecordingHost } from '../../support/recording-host.js';
import { createServices, type Services } from '../../../src/services.js';
import { buildApp } from '../../../src/app.js';
import { defaultSettings, type Instance } from '../../../src/core/instance.js';
import type { Connector } from '../../../src/core/connector.js';
import { createWhatsAppWebFactory, waWebDefaults, type WaWebSettings } from '../../../src/connectors/whatsapp-web/index.js';

// ---------------------------------------------------------------------------------------------------------------
// Noise (responder side) and frames

const sha256 = (...parts: Uint8Array[]) => createHash('sha256').update(Buffer.concat(parts)).digest();

/** HKDF-SHA256 with an empty info, 64 bytes, split in two halves. */
function hkdf64(ikm: Uint8Array, salt: Uint8Array): [Buffer, Buffer] {
  const prk = createHmac('sha256', salt).update(ikm).digest();
  const first = createHmac('sha256', prk)
    .update(Buffer.from([1]))
    .digest();
  const second = createHmac('sha256', prk)
    .update(Buffer.concat([first, Buffer.from([2])]))
    .digest();
  return [first, second];
}

function nonce(counter: number): Buffer {
  const iv = Buffer.alloc(12);
  iv.writeUInt32BE(counter, 8);
  return iv;
}

function seal(key: Uint8Array, counter: number, aad: Uint8Array, plain: Uint8Array): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, nonce(counter));
  cipher.setAAD(aad);
  return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

function open(key: Uint8Array, counter: number, aad: Uint8Array, sealed: Uint8Array): Buffer {
  const data = Buffer.from(sealed);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce(counter));
  decipher.setAAD(aad);
  decipher.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]);
}

class Handshake {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;

  constructor() {
    const mode = Buffer.from(NOISE_MODE);
    this.hash = mode.length === 32 ? mode : sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
  }

  mixHash(data: Uint8Array): void {
    this.hash = sha256(this.hash, data);
  }

  mixKey(secret: Uint8Array): void {
    const [write, read] = hkdf64(secret, this.salt);
    this.salt = write;
    this.key = read;
    this.counter = 0;
  }

  encrypt(plain: Uint8Array): Buffer {
    const sealed = seal(this.key, this.counter++, this.hash, plain);
    this.mixHash(sealed);
    return sealed;
  }

  decrypt(sealed: Uint8Array): Buffer {
    const plain = open(this.key, this.counter++, this.hash, sealed);
    this.mixHash(sealed);
    return plain;
  }

  /** Transport keys: the client writes with the first half, so the server reads with it. */
  split(): { send: Buffer; receive: Buffer } {
    const [clientWrite, clientRead] = hkdf64(Buffer.alloc(0), this.salt);
    return { send: clientRead, receive: clientWrite };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The loopback WhatsApp Web server

type KeyPair = ReturnType<typeof Curve.generateKeyPair>;

interface Identity {
  root: KeyPair;
  serverStatic: KeyPair;
  certChain: Uint8Array;
}

function makeIdentity(): Identity {
  const root = Curve.generateKeyPair();
  const intermediate = Curve.generateKeyPair();
  const serverStatic = Curve.generateKeyPair();
  const intermediateDetails = proto.CertChain.NoiseCertificate.Details.encode({ serial: 1, issuerSerial: 0, key: intermediate.public }).finish();
  const leafDetails = proto.CertChain.NoiseCertificate.Details.encode({ serial: 2, issuerSerial: 1, key: serverStatic.public }).finish();
  const certChain = proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) },
    leaf: { details: leafDetails, signature: Curve.sign(intermediate.private, leafDetails) },
  }).finish();
  return { root, serverStatic, certChain };
}

type Mode = 'normal' | 'hangup';

class MockConnection {
  readonly openedAt = Date.now();
  readonly nodes: BinaryNode[] = [];
  clientStatic: Buffer | undefined;
  payload: proto.ClientPayload | undefined;
  /** The QR references this connection offered (registration). */
  refs: string[] = [];
  private buffer = Buffer.alloc(0);
  private introSeen = false;
  private handshake: Handshake | undefined;
  private serverEphemeral = Curve.generateKeyPair();
  private transport: { send: Buffer; receive: Buffer; sent: number; received: number } | undefined;
  private chain: Promise<void> = Promise.resolve();
  closed = false;

  constructor(
    readonly ws: WebSocket,
    readonly server: MockWhatsApp,
  ) {
    ws.on('message', (data: Buffer) => {
      this.chain = this.chain
        .then(() => this.onData(data))
        .catch((error: unknown) => {
          this.server.errors.push(error);
        });
    });
    ws.on('close', () => (this.closed = true));
  }

  get isLogin(): boolean {
    return Boolean(this.payload?.username);
  }

  username(): string | undefined {
    return this.payload?.username ? String(this.payload.username) : undefined;
  }

  private async onData(data: Buffer): Promise<void> {
    this.buffer = Buffer.concat([this.buffer, data]);
    if (!this.introSeen) {
      if (this.buffer.length < 4) return;
      expect(this.buffer.subarray(0, 4).equals(Buffer.from(NOISE_WA_HEADER))).toBe(true);
      this.buffer = this.buffer.subarray(4);
      this.introSeen = true;
    }
    while (this.buffer.length >= 3) {
      const size = (this.buffer[0] << 16) | (this.buffer[1] << 8) | this.buffer[2];
      if (this.buffer.length < size + 3) return;
      const frame = this.buffer.subarray(3, size + 3);
      this.buffer = this.buffer.subarray(size + 3);
      await this.onFrame(frame);
    }
  }

  private async onFrame(frame: Buffer): Promise<void> {
    if (!this.transport) {
      const message = proto.HandshakeMessage.decode(frame);
      if (message.clientHello?.ephemeral) this.answerHello(Buffer.from(message.clientHello.ephemeral));
      else if (message.clientFinish) this.finish(message.clientFinish);
      return;
    }
    const plain = open(this.transport.receive, this.transport.received++, Buffer.alloc(0), frame);
    const node = await decodeBinaryNode(plain);
    this.nodes.push(node);
    this.server.onNode(this, node);
  }

  private answerHello(clientEphemeral: Buffer): void {
    const { identity } = this.server;
    const handshake = new Handshake();
    handshake.mixHash(NOISE_WA_HEADER);
    handshake.mixHash(clientEphemeral);
    handshake.mixHash(this.serverEphemeral.public);
    handshake.mixKey(Curve.sharedKey(this.serverEphemeral.private, clientEphemeral));
    const staticSealed = handshake.encrypt(identity.serverStatic.public);
    handshake.mixKey(Curve.sharedKey(identity.serverStatic.private, clientEphemeral));
    const payload = handshake.encrypt(identity.certChain);
    this.handshake = handshake;
    this.sendFrame(proto.HandshakeMessage.encode({ serverHello: { ephemeral: this.serverEphemeral.public, static: staticSealed, payload } }).finish());
  }

  private finish(clientFinish: proto.HandshakeMessage.IClientFinish): void {
    const handshake = this.handshake!;
    this.clientStatic = handshake.decrypt(clientFinish.static!);
    handshake.mixKey(Curve.sharedKey(this.serverEphemeral.private, this.clientStatic));
    this.payload = proto.ClientPayload.decode(handshake.decrypt(clientFinish.payload!));
    this.transport = { ...handshake.split(), sent: 0, received: 0 };
    this.server.onAuthenticated(this);
  }

  private sendFrame(bytes: Uint8Array): void {
    if (this.closed) return;
    const header = Buffer.alloc(3);
    header.writeUIntBE(bytes.length, 0, 3);
    this.ws.send(Buffer.concat([header, bytes]));
  }

  sendNode(node: BinaryNode): void {
    const transport = this.transport!;
    this.sendFrame(seal(transport.send, transport.sent++, Buffer.alloc(0), encodeBinaryNode(node)));
  }

  /** Nodes received with the given tag whose first child has `childTag`. */
  received(tag: string, childTag?: string): BinaryNode[] {
    return this.nodes.filter((n) => n.tag === tag && (!childTag || (Array.isArray(n.content) && n.content.some((c) => c.tag === childTag))));
  }
}

class MockWhatsApp {
  readonly identity = makeIdentity();
  readonly connections: MockConnection[] = [];
  readonly errors: unknown[] = [];
  readonly upgrades: { origin: string | undefined; path: string | undefined }[] = [];
  mode: Mode = 'normal';
  refsPerSocket = 3;
  /** When false, a login is left waiting (no `success`), e.g. to test an idle connection. */
  answerLogin = true;
  private readonly wss: WebSocketServer;
  private readonly ownerLid = '99887766554433@lid';

  private constructor(wss: WebSocketServer) {
    this.wss = wss;
    wss.on('connection', (ws, request) => {
      this.upgrades.push({ origin: request.headers.origin, path: request.url });
      if (this.mode === 'hangup') {
        ws.close();
        this.connections.push(new MockConnection(ws, this));
        return;
      }
      this.connections.push(new MockConnection(ws, this));
    });
  }

  static async start(): Promise<MockWhatsApp> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    return new MockWhatsApp(wss);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/ws/chat`;
  }

  get last(): MockConnection {
    return this.connections[this.connections.length - 1];
  }

  onAuthenticated(connection: MockConnection): void {
    if (connection.isLogin) {
      if (this.answerLogin) {
        connection.sendNode({ tag: 'success', attrs: { t: String(Math.floor(Date.now() / 1000)), lid: this.ownerLid, props: '1' } });
      }
      return;
    }
    connection.refs = Array.from({ length: this.refsPerSocket }, (_, i) => `ref-${this.connections.length}-${i}-${randomBytes(4).toString('hex')}`);
    connection.sendNode({
      tag: 'iq',
      attrs: { id: `pair-${randomBytes(3).toString('hex')}`, type: 'set', from: 's.whatsapp.net', xmlns: 'md' },
      content: [{ tag: 'pair-device', attrs: {}, content: connection.refs.map((ref) => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }],
    });
  }

  /** Answers the client's queries (generic results; a low pre-key count so keys get uploaded and stored). */
  onNode(connection: MockConnection, node: BinaryNode): void {
    if (node.tag !== 'iq') return;
    const children = Array.isArray(node.content) ? node.content : [];
    if (node.attrs.type === 'result' && children.some((c) => c.tag === 'pair-device-sign')) {
      // The phone accepted the new device: WhatsApp asks the client to reconnect (515).
      setTimeout(() => connection.sendNode({ tag: 'stream:error', attrs: { code: '515' } }), 20);
      return;
    }
    if (node.attrs.type !== 'get' && node.attrs.type !== 'set') return;
    const content = node.attrs.xmlns === 'encrypt' && children.some((c) => c.tag === 'count') ? [{ tag: 'count', attrs: { value: '3' } }] : undefined;
    connection.sendNode({ tag: 'iq', attrs: { id: node.attrs.id, type: 'result', from: 's.whatsapp.net' }, ...(content ? { content } : {}) });
  }

  /** The phone scans `qr`: it signs the device identity in it and announces the pairing to the client. */
  scan(qr: string, phone: string, device = 7): void {
    const [ref, , identityB64, advB64] = qr.split('#')[1].split(',');
    const connection = this.connections.find((c) => c.refs.includes(ref));
    if (!connection) throw new Error('the QR reference belongs to no connection');
    const identityKey = Buffer.from(identityB64, 'base64');
    const account = Curve.generateKeyPair();
    const details = proto.ADVDeviceIdentity.encode({ rawId: 4242, timestamp: Math.floor(Date.now() / 1000), keyIndex: 1 }).finish();
    const accountSignature = Curve.sign(account.private, Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, details, identityKey]));
    const signed = proto.ADVSignedDeviceIdentity.encode({ details, accountSignatureKey: account.public, accountSignature }).finish();
    const identity = proto.ADVSignedDeviceIdentityHMAC.encode({ details: signed, hmac: hmacSign(signed, Buffer.from(advB64, 'base64')) }).finish();
    connection.sendNode({
      tag: 'iq',
      attrs: { id: `ps-${randomBytes(3).toString('hex')}`, type: 'set', from: 's.whatsapp.net', xmlns: 'md' },
      content: [
        {
          tag: 'pair-success',
          attrs: {},
          content: [
            { tag: 'device-identity', attrs: {}, content: identity },
            { tag: 'platform', attrs: { name: 'android' } },
            { tag: 'device', attrs: { jid: `${phone}:${device}@s.whatsapp.net`, lid: `${this.ownerLid.split('@')[0]}:${device}@lid` } },
          ],
        },
      ],
    });
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Test world

interface World {
  mock: MockWhatsApp;
  store: Store;
  services: Services;
  instance: Instance;
  host: RecordingHost;
  /** A connector made by a fresh factory (as after a service restart), registered for cleanup. */
  connector(overrides?: Partial<WaWebSettings> & { qrcodeLimit?: number }): Connector;
  outboxEvents(): Promise<string[]>;
  sessionRow(): Promise<Record<string, unknown> | null>;
  keyRows(): Promise<number>;
}

const cleanups: (() => Promise<void>)[] = [];
const mocks: MockWhatsApp[] = [];
let originalRoot: typeof WA_CERT_DETAILS.PUBLIC_KEY;

beforeAll(() => {
  originalRoot = WA_CERT_DETAILS.PUBLIC_KEY;
});

afterEach(async () => {
  const errors = mocks.splice(0).flatMap((m) => m.errors);
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  // The loopback server's own protocol code must not have failed (its errors have no test to fail otherwise).
  expect(errors).toEqual([]);
});

afterAll(() => {
  WA_CERT_DETAILS.PUBLIC_KEY = originalRoot;
});

function testLogger(): Logger {
  const level = process.env.WA_TEST_LOG;
  return level ? createLogger(level as 'debug') : silentLogger();
}

async function makeWorld(options: { number?: string; target?: StoreTarget; env?: Record<string, string> } = {}): Promise<World> {
  const mock = await MockWhatsApp.start();
  mocks.push(mock);
  // Trust the loopback server's certificate chain, as a test CA.
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(mock.identity.root.public);
  const dir = mkdtempSync(join(tmpdir(), 'wa-wiring-'));
  // SQLite in a temporary folder unless a store target (e.g. PostgreSQL) is given.
  const opened = options.target ? await options.target.open() : { uri: `file:${join(dir, 'test.db')}`, store: undefined, dispose: async () => {} };
  const store = opened.store ?? (await openStore(opened.uri));
  // The service's own connectors (the instance service, as the API drives it) reach the loopback server too.
  const config = loadConfig({ DATA_DIR: dir, DATABASE_CONNECTION_URI: opened.uri, LOG_LEVEL: 'silent', WA_WEBSOCKET_URL: mock.url, ...options.env });
  const services = createServices({ config, logger: silentLogger(), store, globalApiKey: 'global-test-key', secretsKey: randomBytes(32) });
  const { instance } = await services.instances.create({
    name: 'wa-test',
    integration: 'WHATSAPP-BAILEYS',
    number: options.number,
    settings: { ...defaultSettings },
    sinks: [],
  });
  const host = new RecordingHost(services.connectorHost);
  const connectors: Connector[] = [];
  cleanups.push(async () => {
    for (const connector of connectors) await connector.stop().catch(() => undefined);
    await services.stop();
    await mock.close();
    await store.close();
    await opened.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const baseWaWeb: WaWebSettings = { ...waWebDefaults, webSocketUrl: mock.url, reconnectBaseMs: 300, reconnectMaxMs: 5_000, idleRestartMs: 60_000 };
  return {
    mock,
    store,
    services,
    instance,
    host,
    connector(overrides = {}) {
      const { qrcodeLimit = 30, ...waWeb } = overrides;
      const factory = createWhatsAppWebFactory({
        config: { qrcodeLimit, qrcodeColor: '#198754', logLevel: 'silent', waWeb: { ...baseWaWeb, ...waWeb } },
        logger: testLogger(),
        tuning: {
          socketOverrides: { qrTimeout: 400, connectTimeoutMs: 10_000, keepAliveIntervalMs: 120_000, defaultQueryTimeoutMs: 10_000 },
          firstQrWaitMs: 10_000,
          random: () => 0.999,
        },
      });
      const connector = factory(instance, host);
      connectors.push(connector);
      return connector;
    },
    async outboxEvents() {
      const rows = await store.db.selectFrom('outbox').select(['event']).where('instance_id', '=', instance.id).orderBy('created_at').execute();
      return rows.map((r) => r.event);
    },
    async sessionRow() {
      return services.connectorHost.loadSession(instance.id);
    },
    async keyRows() {
      const rows = await store.db.selectFrom('session_keys').select(['id']).where('instance_id', '=', instance.id).execute();
      return rows.length;
    },
  };
}

const world = (options: { number?: string } = {}) => makeWorld(options);

const PHONE = '5511999990000';

/** Links the instance: start, scan the first QR, wait for `open` after the post-pairing restart. */
async function link(w: World, connector: Connector): Promise<void> {
  await connector.start();
  const qr = connector.qr();
  expect(qr).not.toBeNull();
  w.mock.scan(qr!.code, PHONE);
  // The connector is open before the host is told (its credentials are saved first): wait for both.
  await waitFor(() => connector.state() === 'open' && w.host.last('open') !== undefined, 20_000, { what: 'open after pairing', intervalMs: 25 });
}

// ---------------------------------------------------------------------------------------------------------------

describe('connecting and linking', () => {
  it('connect with a number while a QR code without a pairing code shows starts over in pairing mode and answers the code', async () => {
    const w = await makeWorld({ env: { WA_CONNECT_TIMEOUT_MS: '10000' } });
    const first = await w.services.instances.connect(w.instance);
    expect(first).toMatchObject({ state: 'connecting', qr: { count: 1, pairingCode: null } });
    const sockets = w.mock.connections.length;

    const paired = await w.services.instances.connect(w.instance, '+55 11 98888-7777');
    expect(paired).toMatchObject({ state: 'connecting', qr: { count: 1, pairingCode: expect.stringMatching(/^[A-Z0-9]{8}$/) } });
    expect(w.mock.connections.length).toBe(sockets + 1);
    const request = w.mock.last.received('iq', 'link_code_companion_reg')[0];
    expect(getBinaryNodeChild(request, 'link_code_companion_reg')?.attrs.jid).toBe('5511988887777@s.whatsapp.net');
    // Asked again, the same code: no new linking.
    const again = await w.services.instances.connect(w.services.registry.byInstanceId(w.instance.id)!, '5511988887777');
    expect(again).toMatchObject({ qr: { pairingCode: paired.state === 'open' ? null : paired.qr?.pairingCode } });
    expect(w.mock.connections.length).toBe(sockets + 1);
  });

  it('connects to the configured websocket, reports connecting, then a real QR as a PNG data URL', async () => {
    const w = await world();
    const connector = w.connector();
    await connector.start();

    expect(w.mock.upgrades[0]).toEqual({ origin: 'https://web.whatsapp.com', path: '/ws/chat' });
    // A fresh device registers (it does not log in) and gets QR references.
    expect(w.mock.last.isLogin).toBe(false);
    expect(connector.state()).toBe('connecting');
    const qr = connector.qr();
    expect(qr?.count).toBe(1);
    expect(qr?.pairingCode).toBeNull();
    expect(qr?.base64).toMatch(/^data:image\/png;base64,/);
    // The QR carries the reference the server sent and the device's public noise key (what a phone needs).
    const [ref, noiseKey] = qr!.code.split('#')[1].split(',');
    expect(w.mock.last.refs[0]).toBe(ref);
    expect(Buffer.from(noiseKey, 'base64').equals(w.mock.last.clientStatic!)).toBe(true);
    expect(w.host.states()).toEqual(['connecting']);
    expect(w.host.named('qr')[0]).toMatchObject({ qr: { count: 1, code: qr!.code } });
    // Nothing is stored before a phone links the device.
    expect(await w.sessionRow()).toBeNull();
    expect(await w.outboxEvents()).toEqual(expect.arrayContaining(['CONNECTION_UPDATE', 'QRCODE_UPDATED']));
  });

  it('counts refreshed QR codes and gives up at QRCODE_LIMIT as Evolution does (limit message, refused, close)', async () => {
    const w = await world();
    const connector = w.connector({ qrcodeLimit: 2 });
    await connector.start();
    // The connection closes first; giving up ends with the core told of the close (after the two events).
    await waitFor(() => connector.state() === 'close' && w.host.last('close') !== undefined, 15_000, { what: 'close after the QR limit', intervalMs: 25 });

    const counts = w.host.named('qr').map((c) => c.qr.count);
    expect(counts).toEqual([1, 2]);
    expect(w.host.events('QRCODE_UPDATED')).toEqual([{ message: 'QR code limit reached, please login again', statusCode: 500 }]);
    expect(w.host.events('CONNECTION_UPDATE')).toEqual([{ instance: 'wa-test', state: 'refused', statusReason: 428 }]);
    expect(w.host.last('close')).toMatchObject({ reason: 'QR code limit reached', statusReason: 428 });
    expect(connector.qr()).toBeNull();
    // No reconnect after giving up.
    const sockets = w.mock.connections.length;
    await sleep(800);
    expect(w.mock.connections.length).toBe(sockets);
  });

  it('asks for a pairing code when the instance has a number', async () => {
    const w = await world({ number: '+55 11 98888-7777' });
    const connector = w.connector();
    await connector.start();

    const qr = connector.qr();
    expect(qr?.pairingCode).toMatch(/^[A-Z0-9]{8}$/);
    const request = w.mock.last.received('iq', 'link_code_companion_reg')[0];
    const registration = getBinaryNodeChild(request, 'link_code_companion_reg');
    expect(registration?.attrs.jid).toBe('5511988887777@s.whatsapp.net');
    expect(w.host.named('qr')[0]).toMatchObject({ qr: { pairingCode: qr!.pairingCode } });
  });

  it('links on a scan: restarts after pairing, logs in, reports open with the owner and stores the session', async () => {
    const w = await world();
    const connector = w.connector();
    await link(w, connector);

    // Registration, then (after WhatsApp's 515 restart) a login as the paired device.
    expect(w.mock.connections.length).toBe(2);
    expect(w.mock.connections[1].isLogin).toBe(true);
    expect(w.mock.connections[1].username()).toBe(PHONE);
    expect(w.mock.connections[1].payload?.device).toBe(7);
    expect(w.host.last('open')).toEqual({ state: 'open', ownerJid: `${PHONE}@s.whatsapp.net`, profileName: null, statusReason: 200 });
    // The registry follows once the state is committed.
    await vi.waitFor(() => expect(w.services.registry.byInstanceId(w.instance.id)).toMatchObject({ status: 'open', ownerJid: `${PHONE}@s.whatsapp.net` }), {
      timeout: 5_000,
    });
    expect(connector.lastActivityAt?.()).toBeGreaterThan(Date.now() - 10_000);

    // Creds in the session record, Signal keys (the uploaded pre-keys) as rows.
    await waitFor(async () => (await w.keyRows()) > 0, 10_000, { what: 'keys stored', intervalMs: 25 });
    const session = await w.sessionRow();
    expect(session).toMatchObject({ kind: 'whatsapp-web', creds: { me: { id: `${PHONE}:7@s.whatsapp.net` } } });
  });
});

const targets = await storeTargets();

describe.each(targets)('the session in the store ($name)', (target) => {
  const world = (options: { number?: string } = {}) => makeWorld({ ...options, target });
  // Only PostgreSQL can be unavailable (storeTargets printed why; REQUIRE_SERVICES=1 makes that a failure instead).
  if (!target.available) {
    it.skipIf(true)(`needs ${target.name}, which is not reachable here`, () => {});
    return;
  }

  it('is reloaded by a new connector (as after a restart): the same device logs in with the same keys', async () => {
    const w = await world();
    const first = w.connector();
    await link(w, first);
    const registeredKey = w.mock.connections[0].clientStatic!;
    await waitFor(async () => (await w.keyRows()) > 0, 10_000, { what: 'keys stored', intervalMs: 25 });
    const keysBefore = await w.keyRows();
    await first.stop();
    expect(first.state()).toBe('close');

    const second = w.connector();
    await second.start();
    await waitFor(() => second.state() === 'open', 15_000, { what: 'open from the stored session', intervalMs: 25 });
    const login = w.mock.last;
    expect(login.isLogin).toBe(true);
    expect(login.username()).toBe(PHONE);
    // The static noise key on the wire is the one generated when the device registered: the creds came back from the store.
    expect(login.clientStatic!.equals(registeredKey)).toBe(true);
    expect(second.qr()).toBeNull();
    expect(await w.keyRows()).toBeGreaterThanOrEqual(keysBefore);
    // Never two live sockets: the first connector's socket was closed before the second connected.
    expect(w.mock.connections.filter((c) => !c.closed)).toHaveLength(1);
  });

  it('is forgotten when the phone logs the device out (401): keys and creds deleted, LOGOUT_INSTANCE emitted', async () => {
    const w = await world();
    const connector = w.connector();
    await link(w, connector);
    await waitFor(async () => (await w.keyRows()) > 0, 10_000, { what: 'keys stored', intervalMs: 25 });

    w.mock.last.sendNode({ tag: 'failure', attrs: { reason: '401' } });
    await waitFor(() => w.host.of('loggedOut').length > 0, 10_000, { what: 'logged out', intervalMs: 25 });
    // The report is recorded when it is made; the logout's unit of work (session, events, state) commits after it.
    await waitFor(() => w.services.registry.byInstanceId(w.instance.id)?.ownerJid === null, 10_000, { what: 'logout stored', intervalMs: 25 });

    expect(connector.state()).toBe('close');
    expect(await w.sessionRow()).toBeNull();
    expect(await w.keyRows()).toBe(0);
    expect(w.host.events('STATUS_INSTANCE')).toEqual([expect.objectContaining({ instance: 'wa-test', status: 'closed', disconnectionReasonCode: 401 })]);
    expect(await w.outboxEvents()).toEqual(expect.arrayContaining(['STATUS_INSTANCE', 'LOGOUT_INSTANCE']));
    expect(w.services.registry.byInstanceId(w.instance.id)).toMatchObject({ status: 'close', ownerJid: null });
    const sockets = w.mock.connections.length;
    await sleep(800);
    expect(w.mock.connections.length).toBe(sockets);
  });

  it('is forgotten on an API logout: the device unlinks itself first', async () => {
    const w = await world();
    const connector = w.connector();
    await link(w, connector);
    const live = w.mock.last;

    await connector.logout();

    await waitFor(() => live.received('iq', 'remove-companion-device').length > 0, 5_000, { what: 'unlink request', intervalMs: 25 });
    expect(getBinaryNodeChild(live.received('iq', 'remove-companion-device')[0], 'remove-companion-device')?.attrs.jid).toBe(`${PHONE}:7@s.whatsapp.net`);
    expect(await w.sessionRow()).toBeNull();
    expect(await w.keyRows()).toBe(0);
    expect(w.host.of('loggedOut')).toHaveLength(1);

    // Linking again works with fresh credentials (inbound processing is bound to the new socket, not the old one).
    await connector.start();
    expect(connector.qr()?.count).toBe(1);
    expect(w.mock.last.isLogin).toBe(false);
    expect(w.mock.last.clientStatic!.equals(live.clientStatic!)).toBe(false);
  });

  it('DELETE /instance/logout over HTTP unlinks the account and forgets its creds and keys, with the close state and LOGOUT_INSTANCE', async () => {
    const w = await world();
    const app = await buildApp(w.services);
    cleanups.push(() => app.close());
    const api = async (method: 'GET' | 'DELETE', path: string) => {
      const answer = await app.inject({ method, url: `/messenger/${path}`, headers: { apikey: 'global-test-key' } });
      return { status: answer.statusCode, body: answer.json() };
    };
    // Linked as a user does it: connect (the service's own connector), scan the QR, wait until open.
    const connect = await api('GET', `instance/connect/${w.instance.name}`);
    expect(connect.status).toBe(200);
    w.mock.scan(connect.body.code, PHONE);
    await waitFor(async () => (await api('GET', `instance/connectionState/${w.instance.name}`)).body.instance.state === 'open', 20_000, {
      what: 'open after pairing',
      intervalMs: 50,
    });
    await waitFor(async () => (await w.keyRows()) > 0, 10_000, { what: 'keys stored', intervalMs: 25 });

    const logout = await api('DELETE', `instance/logout/${w.instance.name}`);
    expect(logout).toEqual({ status: 200, body: { status: 'SUCCESS', error: false, response: { message: 'Instance logged out' } } });
    expect(await w.sessionRow()).toBeNull();
    expect(await w.keyRows()).toBe(0);
    expect((await api('GET', `instance/connectionState/${w.instance.name}`)).body.instance.state).toBe('close');
    expect((await w.outboxEvents()).slice(-2)).toEqual(['LOGOUT_INSTANCE', 'CONNECTION_UPDATE']);
    // The device was unlinked on WhatsApp's side too.
    expect(w.mock.last.received('iq', 'remove-companion-device').length).toBe(1);
  });

  it('forgets the session with the logout itself: a logout that could not be stored leaves creds and keys whole', async () => {
    const w = await world();
    const connector = w.connector();
    await link(w, connector);
    await waitFor(async () => (await w.keyRows()) > 0, 10_000, { what: 'keys stored', intervalMs: 25 });
    const keysBefore = await w.keyRows();
    const failing = vi.spyOn(w.services.registry, 'updateConnection').mockRejectedValueOnce(new Error('store write failed (injected)'));

    await expect(connector.logout()).rejects.toThrow('store write failed (injected)');
    failing.mockRestore();

    // Nothing of the logout was stored (before, creds and keys were deleted in units of their own, ahead of it: a
    // crash there left an account unlinked, stored as open, with no LOGOUT_INSTANCE).
    expect(await w.sessionRow()).toMatchObject({ kind: 'whatsapp-web', creds: { me: { id: `${PHONE}:7@s.whatsapp.net` } } });
    expect(await w.keyRows()).toBeGreaterThanOrEqual(keysBefore);
    expect(await w.outboxEvents()).not.toContain('LOGOUT_INSTANCE');
    expect(w.services.registry.byInstanceId(w.instance.id)).toMatchObject({ ownerJid: `${PHONE}@s.whatsapp.net` });
  });
});

describe('closes and reconnects', () => {
  it('reconnects after transient closes with growing waits, not immediately', async () => {
    const w = await world();
    w.mock.mode = 'hangup';
    const connector = w.connector({ reconnectBaseMs: 300, reconnectMaxMs: 5_000 });
    await connector.start();
    await waitFor(() => w.mock.connections.length >= 4, 15_000, { what: 'four connection attempts', intervalMs: 25 });
    await connector.stop();

    const at = w.mock.connections.map((c) => c.openedAt);
    const gaps = at.slice(1, 4).map((t, i) => t - at[i]);
    // random pinned to 0.999: waits of ~300, ~600, ~1200 ms (upper half of base·2^n); a timer never fires early.
    expect(gaps[0]).toBeGreaterThanOrEqual(290);
    expect(gaps[1]).toBeGreaterThanOrEqual(590);
    expect(gaps[2]).toBeGreaterThanOrEqual(1190);
    expect(gaps[2]).toBeGreaterThan(gaps[1]);
    // While retrying the instance is "connecting", not open and not given up; every failed attempt is reported with
    // its reason and code (the server hung up: Baileys' 428), so a client sees why on each one.
    const states = w.host.states();
    expect(new Set(states)).toEqual(new Set(['connecting']));
    const failures = w.host.named('connection').slice(1);
    expect(failures.length).toBeGreaterThanOrEqual(3);
    for (const failure of failures) expect(failure).toMatchObject({ state: 'connecting', statusReason: 428, reason: expect.stringMatching(/\(428\)$/) });
    const sockets = w.mock.connections.length;
    await sleep(900);
    expect(w.mock.connections.length).toBe(sockets);
  });

  it('reports a transient close of an open connection and comes back by itself', async () => {
    const w = await world();
    const connector = w.connector({ reconnectBaseMs: 200 });
    await link(w, connector);
    const before = w.mock.connections.length;

    w.mock.last.ws.close();
    await waitFor(() => w.host.states().filter((s) => s === 'open').length === 2, 15_000, { what: 'open again', intervalMs: 25 });

    expect(w.mock.connections.length).toBe(before + 1);
    expect(w.mock.last.isLogin).toBe(true);
    const states = w.host.states();
    expect(states.slice(-2)).toEqual(['connecting', 'open']);
    expect(w.host.last('connecting')).toMatchObject({ statusReason: 428 });
  });

  it('stops on 440 (connection replaced) with a clear reason instead of fighting the other client', async () => {
    const w = await world();
    const connector = w.connector({ reconnectBaseMs: 100 });
    await link(w, connector);
    const sockets = w.mock.connections.length;

    w.mock.last.sendNode({ tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] });
    // The state turns close before the close is reported to the host: wait for both.
    await waitFor(() => connector.state() === 'close' && w.host.last('close') !== undefined, 10_000, { what: 'close after 440', intervalMs: 25 });

    expect(w.host.last('close')).toMatchObject({ statusReason: 440, reason: expect.stringMatching(/replaced/) });
    await sleep(1_000);
    expect(w.mock.connections.length).toBe(sockets);
    // The session stays: an operator can restart the instance once the other client is gone.
    expect(await w.sessionRow()).not.toBeNull();
  });

  it('restarts an "open" connection that has been silent longer than WA_IDLE_RESTART_MS', async () => {
    const w = await world();
    const connector = w.connector({ idleRestartMs: 1_500 });
    await link(w, connector);
    const sockets = w.mock.connections.length;

    await waitFor(() => w.mock.connections.length > sockets, 15_000, { what: 'a new socket after the silence', intervalMs: 25 });
    await waitFor(() => connector.state() === 'open', 15_000, { what: 'open again', intervalMs: 25 });

    const restart = w.host
      .of('connectionChanged')
      .map(([change]) => ({ change }))
      .find((c) => c.change.state === 'connecting' && /no traffic/.test(c.change.reason ?? ''));
    expect(restart).toMatchObject({ change: { statusReason: 408 } });
    // The silent socket was ended before the new one opened.
    expect(w.mock.connections[sockets - 1].closed).toBe(true);
    await connector.stop();
  });
});
