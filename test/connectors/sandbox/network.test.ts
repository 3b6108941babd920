// Tests for the sandbox messenger network, at its boundary with the core (a recording ConnectorHost).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import QRCode from 'qrcode';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { CodedError } from '../../../src/core/errors.js';
import { loadConfig } from '../../../src/platform/config.js';
import { TransientConnectorError, type Connector, type ConnectorHost } from '../../../src/core/connector.js';
import { SandboxNetwork } from '../../../src/connectors/sandbox/network.js';
import { sandboxLid } from '../../../src/connectors/sandbox/addresses.js';
import { defaultSettings, type Instance, type PrivacySettings, type Settings } from '../../../src/core/instance.js';
import { silentLogger } from '../../../src/platform/logger.js';
import { openStore, type Store } from '../../../src/platform/store/db.js';
import { statusOf } from '../../../src/platform/http/error-envelope.js';
import { waitFor } from '../../support/wait.js';
import { RecordingHost } from '../../support/recording-host.js';

/** Plays the core for the network: keeps sessions and instances (as the registry would), records nothing. */
class StandInCore implements ConnectorHost {
  readonly sessions = new Map<string, Record<string, unknown>>();
  constructor(private readonly instances: Map<string, Instance>) {}

  async connectionChanged(instanceId: string, change: Parameters<ConnectorHost['connectionChanged']>[1]) {
    const instance = this.instances.get(instanceId);
    if (instance) {
      instance.status = change.state;
      if (change.ownerJid !== undefined) instance.ownerJid = change.ownerJid;
      if (change.profileName !== undefined) instance.profileName = change.profileName;
    }
  }
  async loggedOut(instanceId: string) {
    // As the host does: the stored session goes with the logout.
    this.sessions.delete(instanceId);
    const instance = this.instances.get(instanceId);
    if (instance) {
      instance.status = 'close';
      instance.ownerJid = null;
    }
  }
  async loadSession(instanceId: string) {
    return this.sessions.get(instanceId) ?? null;
  }
  async saveSession(instanceId: string, data: Record<string, unknown> | null) {
    if (data) this.sessions.set(instanceId, data);
    else this.sessions.delete(instanceId);
  }
  currentInstance(instanceId: string) {
    return this.instances.get(instanceId);
  }
  // The core keeps nothing else the sandbox reports; the rest exists for connectors of real messengers.
  async qrUpdated() {}
  async messageReceived() {}
  async messageStatus() {}
  async presenceReceived() {}
  async eventOccurred() {}
  async messagesSynced() {}
  async messageChanged() {}
  async labelChanged() {}
  async proxy() {
    return null;
  }

  async providerToken() {
    return null;
  }
  async loadMedia() {
    return null;
  }
  readonly sessionKeys = {
    get: async () => ({}),
    set: async () => {},
    clear: async () => {},
  };
}

interface World {
  store: Store;
  network: SandboxNetwork;
  host: RecordingHost;
  core: StandInCore;
  instances: Map<string, Instance>;
  connectors: Connector[];
  add(name: string, settings?: Partial<Settings>, privacy?: PrivacySettings): { instance: Instance; connector: Connector };
  /** Adds an instance, starts it and links it to `number` through its QR code. */
  linked(name: string, number: string, settings?: Partial<Settings>, privacy?: PrivacySettings): Promise<{ instance: Instance; connector: Connector }>;
}

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function world(env: Record<string, string> = {}): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-net-'));
  const store = await openStore(`file:${join(dir, 'test.db')}`);
  const config = loadConfig({ DATA_DIR: dir, QRCODE_TTL_MS: '1000', SERVER_URL: 'http://gateway.test', ...env });
  const instances = new Map<string, Instance>();
  const core = new StandInCore(instances);
  const host = new RecordingHost(core, { recordSessionSaves: true });
  const lookup = {
    byId: (id: string) => instances.get(id),
    byOwnerJid: (jid: string) => [...instances.values()].find((i) => i.integration === 'SANDBOX' && i.status === 'open' && i.ownerJid === jid),
    byLid: (lid: string) =>
      [...instances.values()].find((i) => i.integration === 'SANDBOX' && i.status === 'open' && i.ownerJid !== null && sandboxLid(i.ownerJid) === lid),
  };
  const network = new SandboxNetwork({ db: store.db, config, host, lookup, logger: silentLogger() });
  const connectors: Connector[] = [];
  cleanups.push(async () => {
    for (const connector of connectors) await connector.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const add: World['add'] = (name, settings = {}, privacy) => {
    const instance: Instance = {
      id: `id-${name}`,
      name,
      integration: 'SANDBOX',
      status: 'close',
      ownerJid: null,
      profileName: null,
      profilePicUrl: null,
      profileStatus: null,
      number: null,
      businessId: null,
      apikeyHash: `hash-${name}`,
      settings: { ...defaultSettings, ...settings },
      privacy: privacy ?? null,
      createdAt: Date.now(),
    };
    instances.set(instance.id, instance);
    const connector = network.createConnector(instance);
    connectors.push(connector);
    return { instance, connector };
  };
  const linked: World['linked'] = async (name, number, settings, privacy) => {
    const made = add(name, settings, privacy);
    await made.connector.start();
    await network.scan(made.connector.qr()!.code, number);
    return made;
  };
  return { store, network, host, core, instances, connectors, add, linked };
}

async function expect400(promise: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CodedError);
  expect(statusOf(error as CodedError)).toBe(400);
  expect((error as CodedError).messages.join(' ')).toMatch(message);
}

const jid = (digits: string) => `${digits}@s.whatsapp.net`;
const A = '5511900000001';
const B = '5511900000002';
const C = '5511900000003';

describe('QR flow', () => {
  it('reports connecting, then a QR whose PNG draws exactly the link code', async () => {
    const w = await world();
    const { instance, connector } = w.add('alpha');
    await connector.start();

    expect(w.host.named().map((c) => c.kind)).toEqual(['connection', 'qr']);
    expect(w.host.named('connection')[0]).toMatchObject({ id: instance.id, state: 'connecting' });
    expect(connector.state()).toBe('connecting');
    const qr = w.host.named('qr')[0].qr;
    expect(qr).toMatchObject({ count: 1, pairingCode: null });
    expect(qr.code).toMatch(/^sbx_[A-Za-z0-9_-]{32}$/);
    expect(connector.qr()).toEqual(qr);

    const rows = await w.store.db.selectFrom('sandbox_codes').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ code: qr.code, instance_id: instance.id });
    expect(Number(rows[0].expires_at) - Number(rows[0].created_at)).toBe(1000);

    expect(qr.base64.startsWith('data:image/png;base64,')).toBe(true);
    const png = Buffer.from(qr.base64.slice('data:image/png;base64,'.length), 'base64');
    const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const matrix = QRCode.create(qr.code, { errorCorrectionLevel: 'H' }).modules;
    const scale = 4;
    const margin = 3;
    expect(info.width).toBe((matrix.size + 2 * margin) * scale);
    expect(info.height).toBe(info.width);
    let mismatches = 0;
    for (let row = 0; row < matrix.size; row++) {
      for (let col = 0; col < matrix.size; col++) {
        const x = (col + margin) * scale + 1;
        const y = (row + margin) * scale + 1;
        const offset = (y * info.width + x) * info.channels;
        const pixel = [data[offset], data[offset + 1], data[offset + 2]];
        const dark = matrix.data[row * matrix.size + col] === 1;
        // Dark modules in QRCODE_COLOR (#198754 by default), light ones white.
        const expected = dark ? [0x19, 0x87, 0x54] : [0xff, 0xff, 0xff];
        if (pixel.join() !== expected.join()) mismatches++;
      }
    }
    expect(mismatches).toBe(0);
  });

  it('connects with a stored session without showing a QR code', async () => {
    const w = await world();
    const { instance, connector } = w.add('beta');
    w.core.sessions.set(instance.id, { ownerJid: jid(B), profileName: 'Beta' });
    await connector.start();
    // Then the account's labels, as they are (a session stored before any link here: none).
    expect(w.host.named()).toEqual([
      { kind: 'connection', id: instance.id, state: 'open', ownerJid: jid(B), profileName: 'Beta' },
      { kind: 'label', id: instance.id, change: { kind: 'sync', labels: [] } },
    ]);
    expect(connector.state()).toBe('open');
    expect(connector.qr()).toBeNull();
  });

  it('refreshes the code with count + 1 when it expires; the old code no longer links', async () => {
    const w = await world();
    const { instance, connector } = w.add('gamma');
    await connector.start();
    const first = connector.qr()!;
    await waitFor(() => w.host.named('qr').length === 2, 3000);
    const second = w.host.named('qr')[1].qr;
    expect(second.count).toBe(2);
    expect(second.code).not.toBe(first.code);
    expect(connector.qr()).toEqual(second);
    expect(w.host.named('connection')).toHaveLength(1);
    const rows = await w.store.db.selectFrom('sandbox_codes').selectAll().where('instance_id', '=', instance.id).execute();
    expect(rows.map((r) => r.code)).toEqual([second.code]);
    await expect400(w.network.scan(first.code, A), /unknown or expired/);
  });

  it('gives up after QRCODE_LIMIT codes: codes deleted, close reported with 428', async () => {
    const w = await world({ QRCODE_LIMIT: '2' });
    const { instance, connector } = w.add('delta');
    await connector.start();
    await waitFor(() => w.host.named('connection').length === 2, 4000);
    expect(w.host.named('qr').map((c) => c.qr.count)).toEqual([1, 2]);
    expect(w.host.named('connection')[1]).toEqual({
      kind: 'connection',
      id: instance.id,
      state: 'close',
      reason: 'QR code limit reached',
      statusReason: 428,
    });
    expect(connector.state()).toBe('close');
    expect(connector.qr()).toBeNull();
    expect(await w.store.db.selectFrom('sandbox_codes').selectAll().execute()).toEqual([]);
    // A later start begins a fresh flow.
    await connector.start();
    expect(connector.qr()?.count).toBe(1);
  });

  it('stop clears the timers and reports nothing; the next start resumes the session', async () => {
    const w = await world();
    const { instance, connector } = w.add('epsilon');
    await connector.start();
    w.host.clear();
    await connector.stop();
    expect(connector.qr()).toBeNull();
    expect(connector.state()).toBe('close');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(w.host.named()).toEqual([]);

    w.core.sessions.set(instance.id, { ownerJid: jid(C), profileName: 'Eps' });
    await connector.start();
    expect(connector.state()).toBe('open');
  });
});

describe('scan', () => {
  it('links the instance: session saved, codes deleted, open reported', async () => {
    const w = await world();
    const { instance, connector } = w.add('alpha');
    await connector.start();
    w.host.clear();
    const result = await w.network.scan(connector.qr()!.code, '+55 11 90000-0001');
    expect(result).toEqual({ instanceId: instance.id, ownerJid: jid(A), profileName: 'alpha' });
    expect(w.host.named()).toEqual([
      { kind: 'saveSession', id: instance.id, data: { ownerJid: jid(A), profileName: 'alpha' } },
      { kind: 'connection', id: instance.id, state: 'open', ownerJid: jid(A), profileName: 'alpha' },
      // A newly linked account has WhatsApp Business's five default labels.
      {
        kind: 'label',
        id: instance.id,
        change: {
          kind: 'sync',
          labels: [
            { id: '1', name: 'New customer', color: 1, deleted: false, predefinedId: '1' },
            { id: '2', name: 'New order', color: 2, deleted: false, predefinedId: '2' },
            { id: '3', name: 'Pending payment', color: 3, deleted: false, predefinedId: '3' },
            { id: '4', name: 'Paid', color: 4, deleted: false, predefinedId: '4' },
            { id: '5', name: 'Order complete', color: 5, deleted: false, predefinedId: '5' },
          ],
        },
      },
    ]);
    expect(connector.state()).toBe('open');
    expect(connector.qr()).toBeNull();
    expect(await w.store.db.selectFrom('sandbox_codes').selectAll().execute()).toEqual([]);
    // No refresh follows once linked.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(w.host.named('qr')).toEqual([]);
  });

  it('uses the given profile name', async () => {
    const w = await world();
    const { connector } = w.add('alpha');
    await connector.start();
    const result = await w.network.scan(connector.qr()!.code, A, 'Alpha Bot');
    expect(result.profileName).toBe('Alpha Bot');
  });

  it('refuses unknown and expired codes', async () => {
    const w = await world();
    const { connector } = w.add('alpha');
    await connector.start();
    await expect400(w.network.scan('sbx_nope', A), /code is unknown or expired; fetch a fresh QR code/);
    const code = connector.qr()!.code;
    await w.store.db
      .updateTable('sandbox_codes')
      .set({ expires_at: Date.now() - 1 })
      .where('code', '=', code)
      .execute();
    await expect400(w.network.scan(code, A), /unknown or expired/);
    expect(connector.state()).toBe('connecting');
  });

  it('refuses a code of a stopped instance', async () => {
    const w = await world();
    const { connector } = w.add('alpha');
    await connector.start();
    const code = connector.qr()!.code;
    await connector.stop();
    await expect400(w.network.scan(code, A), /unknown or expired/);
  });

  it('refuses numbers outside 5–15 digits', async () => {
    const w = await world();
    const { connector } = w.add('alpha');
    await connector.start();
    const code = connector.qr()!.code;
    for (const bad of ['1234', '1234567890123456', '55ab11', '']) {
      await expect400(w.network.scan(code, bad), /number must be 5 to 15 digits/);
    }
    expect(connector.state()).toBe('connecting');
  });

  it('refuses a number already linked to another sandbox instance', async () => {
    const w = await world();
    await w.linked('alpha', A);
    const { connector } = w.add('beta');
    await connector.start();
    await expect400(w.network.scan(connector.qr()!.code, `+${A}`), /already linked to another sandbox instance/);
    expect(connector.state()).toBe('connecting');
  });

  it('refuses another spelling of an account already linked (a Brazilian mobile with or without its ninth digit)', async () => {
    const w = await world();
    await w.linked('alpha', '5511922220002');
    const { connector } = w.add('beta');
    await connector.start();
    await expect400(w.network.scan(connector.qr()!.code, '551122220002'), /already linked to another sandbox instance/);
    const other = w.add('gamma');
    await expect400(w.network.autoLink(other.instance, '551122220002'), /already linked to another sandbox instance/);
    // The short form held first keeps the long form too.
    await w.linked('delta', '553177770001');
    await expect400(w.network.autoLink(w.add('epsilon').instance, '5531977770001'), /already linked to another sandbox instance/);
    expect(connector.state()).toBe('connecting');
  });

  it('two scans of one number at once link only one instance', async () => {
    const w = await world();
    const one = w.add('one');
    const two = w.add('two');
    await one.connector.start();
    await two.connector.start();
    const results = await Promise.allSettled([w.network.scan(one.connector.qr()!.code, A), w.network.scan(two.connector.qr()!.code, A)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  });
});

describe('autoLink', () => {
  it('links a running instance to a generated unused number', async () => {
    const w = await world();
    const { instance, connector } = w.add('auto');
    await connector.start();
    const result = await w.network.autoLink(instance);
    expect(result.ownerJid).toMatch(/^99\d{10}@s\.whatsapp\.net$/);
    expect(connector.state()).toBe('open');
    expect(w.core.sessions.get(instance.id)).toEqual({ ownerJid: result.ownerJid, profileName: 'auto' });
    expect(await w.store.db.selectFrom('sandbox_codes').selectAll().execute()).toEqual([]);
  });

  it('starts a created but not started instance, which reports open', async () => {
    const w = await world();
    const { instance, connector } = w.add('auto');
    await w.network.autoLink(instance, B);
    expect(connector.state()).toBe('open');
    expect(w.host.named('connection')).toEqual([{ kind: 'connection', id: instance.id, state: 'open', ownerJid: jid(B), profileName: 'auto' }]);
    expect(w.host.named('qr')).toEqual([]);
  });

  it('saves the session of an instance without a connector; its first start reports open', async () => {
    const w = await world();
    const { instance } = w.add('auto');
    w.instances.set('id-bare', { ...instance, id: 'id-bare', name: 'bare' });
    const bare = w.instances.get('id-bare')!;
    await w.network.autoLink(bare, C);
    expect(w.host.named('connection', bare.id)).toEqual([]);
    const connector = w.network.createConnector(bare);
    w.connectors.push(connector);
    await connector.start();
    expect(w.host.named('connection', bare.id)[0]).toMatchObject({ state: 'open', ownerJid: jid(C), profileName: 'bare' });
  });

  it('refuses a number in use and an instance already linked', async () => {
    const w = await world();
    const { instance } = await w.linked('alpha', A);
    const other = w.add('other');
    await expect400(w.network.autoLink(other.instance, A), /already linked to another/);
    await expect400(w.network.autoLink(instance), /already linked/);
  });
});

describe('messages between sandbox instances', () => {
  const text = (keyId: string, remoteJid: string) => ({
    keyId,
    remoteJid,
    messageType: 'conversation',
    content: { conversation: 'hello' },
  });

  // Returning from send() is the server's acknowledgement: the core's worker records SERVER_ACK, the network reports the rest.
  it('delivers A → B and reports DELIVERY_ACK to A', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    const b = await w.linked('beta', B);
    w.host.clear();
    await a.connector.messaging.send(text('KEY1', jid(B)));
    const received = w.host.named('received');
    expect(received).toHaveLength(1);
    expect(received[0].id).toBe(b.instance.id);
    expect(received[0].message).toMatchObject({
      keyId: 'KEY1',
      remoteJid: jid(A),
      fromMe: false,
      pushName: 'alpha',
      messageType: 'conversation',
      content: { conversation: 'hello' },
    });
    expect(Math.abs(received[0].message.timestamp - Date.now() / 1000)).toBeLessThan(5);
    expect(w.host.named('status').map((c) => [c.id, c.keyId, c.status])).toEqual([[a.instance.id, 'KEY1', 'DELIVERY_ACK']]);
  });

  it('delivers a retry with the same key id', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    await w.linked('beta', B);
    w.host.clear();
    await a.connector.messaging.send(text('KEY2', jid(B)));
    await a.connector.messaging.send(text('KEY2', jid(B)));
    expect(w.host.named('received').map((c) => c.message.keyId)).toEqual(['KEY2', 'KEY2']);
  });

  it('B with readMessages reads at once: A gets READ', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    await w.linked('beta', B, { readMessages: true });
    w.host.clear();
    await a.connector.messaging.send(text('KEY3', jid(B)));
    expect(w.host.named('status', a.instance.id).map((c) => c.status)).toEqual(['DELIVERY_ACK', 'READ']);
  });

  it('B with read receipts off reads without telling A', async () => {
    const w = await world();
    const privacy: PrivacySettings = { readreceipts: 'none', profile: 'all', status: 'all', online: 'all', last: 'all', groupadd: 'all' };
    const a = await w.linked('alpha', A);
    const b = await w.linked('beta', B, { readMessages: true }, privacy);
    w.host.clear();
    await a.connector.messaging.send(text('KEY4', jid(B)));
    await b.connector.messaging.markRead([{ remoteJid: jid(A), keyId: 'KEY4' }]);
    expect(w.host.named('status', a.instance.id).map((c) => c.status)).toEqual(['DELIVERY_ACK']);
  });

  it('markRead by B sends READ back to the sandbox sender only', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    const b = await w.linked('beta', B);
    w.host.clear();
    await b.connector.messaging.markRead([
      { remoteJid: jid(A), keyId: 'KEY5' },
      { remoteJid: jid('4915100000000'), keyId: 'OUTSIDE' },
    ]);
    expect(w.host.named('status')).toEqual([{ kind: 'status', id: a.instance.id, keyId: 'KEY5', status: 'READ' }]);
  });

  it('markRead finds the sender by the short spelling of its account (no ninth digit, as addresses are normalised)', async () => {
    const w = await world();
    const frank = await w.linked('frank', '5531977770001');
    const erin = await w.linked('erin', '5531988880005');
    w.host.clear();
    await erin.connector.messaging.markRead([{ remoteJid: jid('553177770001'), keyId: 'KEY9' }]);
    expect(w.host.named('status')).toEqual([{ kind: 'status', id: frank.instance.id, keyId: 'KEY9', status: 'READ' }]);
  });

  it('a number without a linked instance gets no receipt beyond the server acknowledgement', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    const b = w.add('beta'); // exists but never linked
    await b.connector.start();
    w.host.clear();
    await a.connector.messaging.send(text('KEY6', jid('4915100000000')));
    await a.connector.messaging.send(text('KEY7', jid(B)));
    expect(w.host.named('received')).toEqual([]);
    expect(w.host.named('status')).toEqual([]);
  });

  it('a sender that is not linked gets a transient error', async () => {
    const w = await world();
    const { connector } = w.add('alpha');
    await expect(connector.messaging.send(text('KEY8', jid(B)))).rejects.toBeInstanceOf(TransientConnectorError);
    await connector.start();
    await expect(connector.messaging.send(text('KEY8', jid(B)))).rejects.toBeInstanceOf(TransientConnectorError);
  });

  it('a status post reaches the linked instances of its list, with the poster as participant', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    const b = await w.linked('beta', B, { readStatus: true });
    const c = await w.linked('gamma', C);
    const d = await w.linked('delta', '5511900000004');
    w.host.clear();
    await a.connector.messaging.send({
      keyId: 'STATUS1',
      remoteJid: 'status@broadcast',
      messageType: 'extendedTextMessage',
      content: { extendedTextMessage: { text: 'my status' } },
      statusJidList: [B, jid(C), '4915100000000', jid(A)],
    });
    // gamma has readStatus off (the default): it ignores statuses, as the WhatsApp connectors do.
    const received = w.host.named('received');
    expect(received.map((r) => r.id)).toEqual([b.instance.id]);
    expect(received.some((r) => r.id === c.instance.id)).toBe(false);
    for (const r of received) {
      expect(r.message).toMatchObject({ keyId: 'STATUS1', remoteJid: 'status@broadcast', participant: jid(A), pushName: 'alpha' });
    }
    expect(received.some((r) => r.id === d.instance.id)).toBe(false);
    expect(w.host.named('status', a.instance.id).map((s) => s.status)).toEqual(['DELIVERY_ACK', 'READ']);
  });

  it('a send to a linked account whose instance is not running yet fails for now (retried), not acknowledged and lost', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    const b = await w.linked('beta', B);
    // As after a crash: the store still says beta is open, but its connector has not started yet.
    await b.connector.stop();
    w.instances.get(b.instance.id)!.status = 'open';
    const message = { keyId: 'OFFLINE1', remoteJid: jid(B), messageType: 'conversation', content: { conversation: 'are you there?' } };
    const refused = await a.connector.messaging.send(message).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TransientConnectorError);
    expect(String((refused as Error).message)).toMatch(/sandbox instance beta .* is not running right now/);
    expect(w.host.named('received').some((r) => r.id === b.instance.id)).toBe(false);
    // Once it runs, the retry reaches it.
    await b.connector.start();
    await a.connector.messaging.send(message);
    expect(w.host.named('received').some((r) => r.id === b.instance.id && r.message.keyId === 'OFFLINE1')).toBe(true);
  });

  it('presence reaches B from A', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    const b = await w.linked('beta', B);
    w.host.clear();
    await a.connector.presence!.sendPresence(jid(B), 'composing');
    await a.connector.presence!.sendPresence(jid('4915100000000'), 'composing');
    expect(w.host.named()).toEqual([{ kind: 'presence', id: b.instance.id, chatJid: jid(A), senderJid: jid(A), presence: 'composing' }]);
  });
});

describe('logout and privacy', () => {
  it('logout forgets the session and reports loggedOut; the next start shows a QR code', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    w.host.clear();
    await a.connector.logout();
    // One report: the host removes the session with the logout's state and events (one unit), not before them.
    expect(w.host.named()).toEqual([{ kind: 'loggedOut', id: a.instance.id }]);
    expect(w.core.sessions.has(a.instance.id)).toBe(false);
    expect(a.connector.state()).toBe('close');
    await a.connector.start();
    expect(a.connector.state()).toBe('connecting');
    expect(a.connector.qr()?.count).toBe(1);
    // The number is free again.
    const b = w.add('beta');
    await b.connector.start();
    await w.network.scan(b.connector.qr()!.code, A);
    expect(b.connector.state()).toBe('open');
  });

  it('updatePrivacy accepts WhatsApp values and refuses others', async () => {
    const w = await world();
    const { connector } = w.add('alpha');
    const good: PrivacySettings = { readreceipts: 'none', profile: 'contacts', status: 'all', online: 'match_last_seen', last: 'none', groupadd: 'contacts' };
    await expect(connector.privacy!.updatePrivacy(good)).resolves.toBeUndefined();
    await expect400(connector.privacy!.updatePrivacy({ ...good, readreceipts: 'contacts' }), /readreceipts must be one of: all, none/);
  });
});

describe('inject', () => {
  it('delivers a message from an outside number to a linked instance', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    w.host.clear();
    const result = await w.network.inject(a.instance.id, { from: '+49 151 0000-0000', text: 'hi bot', pushName: 'Ana' });
    expect(result).toMatchObject({
      key: { remoteJid: jid('4915100000000'), fromMe: false },
      pushName: 'Ana',
      message: { conversation: 'hi bot' },
      messageType: 'conversation',
    });
    expect(result.key.id).toMatch(/^3EB0[0-9A-F]{18}$/);
    expect(w.host.named('received')).toEqual([
      {
        kind: 'received',
        id: a.instance.id,
        message: {
          keyId: result.key.id,
          remoteJid: jid('4915100000000'),
          fromMe: false,
          pushName: 'Ana',
          messageType: 'conversation',
          content: { conversation: 'hi bot' },
          timestamp: result.messageTimestamp,
        },
      },
    ]);

    const image = await w.network.inject(a.instance.id, {
      from: jid('4915100000000'),
      message: { imageMessage: { mimetype: 'image/jpeg', caption: 'look' } },
    });
    expect(image.messageType).toBe('imageMessage');
    expect(image.pushName).toBeNull();
  });

  it('validates the input and refuses an instance that is not linked', async () => {
    const w = await world();
    const a = await w.linked('alpha', A);
    const b = w.add('beta');
    await expect400(w.network.inject(b.instance.id, { from: B, text: 'x' }), /^instance beta is not linked; scan its QR code first$/);
    await expect400(w.network.inject(a.instance.id, { from: B }), /exactly one of text or message/);
    await expect400(w.network.inject(a.instance.id, { from: B, text: 'x', message: { conversation: 'y' } }), /exactly one of text or message/);
    await expect400(w.network.inject(a.instance.id, { from: 'abc', text: 'x' }), /from must be a phone number/);
    await expect400(w.network.inject(a.instance.id, { from: B, message: {} }), /message must be an object/);
    await expect400(w.network.inject(a.instance.id, { from: A, text: 'x' }), /another number than the instance's own/);
  });
});

describe('sandbox media', () => {
  it('stores uploads under DATA_DIR and serves them back by name only', async () => {
    const w = await world();
    const bytes = Buffer.from('encrypted-bytes-and-mac');
    const uploaded = await w.network.uploadMedia(bytes, 'image');
    expect(uploaded.directPath).toMatch(/^\/sandbox\/media\/[0-9a-f]{32}\.enc$/);
    const fileName = uploaded.directPath.slice('/sandbox/media/'.length);
    expect(uploaded.url).toBe(`http://gateway.test/messenger/sandbox/media/${fileName}`);
    expect(await w.network.readMedia(fileName)).toEqual(bytes);
    expect(await w.network.readMedia(`${'0'.repeat(32)}.enc`)).toBeNull();
    const viaConnector = await w.add('alpha').connector.messaging.uploadMedia!(Buffer.from('more'), 'document');
    expect(await w.network.readMedia(viaConnector.directPath.slice('/sandbox/media/'.length))).toEqual(Buffer.from('more'));
    for (const bad of ['../test.db', '..%2Ftest.db', `../sandbox-media/${fileName}`, fileName.toUpperCase(), `${fileName}/`, 'test.db', '']) {
      expect(await w.network.readMedia(bad)).toBeNull();
    }
  });
});
