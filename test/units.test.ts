// Pure rules: configuration validation and its documentation, addresses, status progression, event names.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, settingDocs } from '../src/platform/config.js';
import { toJid } from '../src/messages/jid.js';
import { statusSteps } from '../src/core/message-status.js';
import { eventNames, eventSuffix, resolveEventName, wireName } from '../src/core/event-catalog.js';
import { argbFromColor } from '../src/messages/compose.js';
import { SecretsBox } from '../src/platform/util/secrets-box.js';
import { createHash, randomBytes } from 'node:crypto';
import { keyDigest, KnownKeyDigests } from '../src/platform/util/api-keys.js';
import { customHeaderProblem, deliveryHeaders } from '../src/sinks/webhook/headers.js';

describe('configuration', () => {
  it('has defaults that start the service on SQLite', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.databaseUri).toBe('file:./data/switchboard.db');
    expect(config.globalApiKey).toBeUndefined();
    expect(config.webhookRetryMaxAttempts).toBe(10);
  });

  it('lists every invalid setting at once', () => {
    try {
      loadConfig({ SERVER_PORT: 'eighty', WEBHOOK_GLOBAL_ENABLED: 'maybe', DATABASE_CONNECTION_URI: 'mysql://x' });
      expect.unreachable('loadConfig accepted bad settings');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toMatch(/SERVER_PORT must be a whole number/);
      expect(message).toMatch(/WEBHOOK_GLOBAL_ENABLED must be true or false/);
      expect(message).toMatch(/DATABASE_CONNECTION_URI must start with file:/);
    }
  });

  it('reads the global webhook event filter', () => {
    const config = loadConfig({ WEBHOOK_EVENTS_MESSAGES_UPSERT: 'true', WEBHOOK_EVENTS_QRCODE_UPDATED: 'false' });
    expect(config.webhookGlobalEvents).toEqual({ MESSAGES_UPSERT: true, QRCODE_UPDATED: false });
  });

  it('is documented in the README, setting by setting', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const setting of settingDocs) expect(readme, setting.env).toContain(`\`${setting.env}\``);
  });
});

describe('recipient addresses (Evolution §8.1)', () => {
  it.each([
    ['5511999999999', '5511999999999@s.whatsapp.net'],
    ['5531999999999', '553199999999@s.whatsapp.net'],
    ['+55 (11) 99999-9999', '5511999999999@s.whatsapp.net'],
    ['5215512345678', '525512345678@s.whatsapp.net'],
    ['120363012345678901', '120363012345678901@g.us'],
    ['120363012345678901@g.us', '120363012345678901@g.us'],
    ['status@broadcast', 'status@broadcast'],
    ['5511999999999:12@s.whatsapp.net', '5511999999999@s.whatsapp.net'],
    ['4915112345678', '4915112345678@s.whatsapp.net'],
  ])('%s → %s', (input, expected) => {
    expect(toJid(input)).toBe(expected);
  });

  it('refuses what cannot be a number, naming the field', () => {
    expect(() => toJid('abc')).toThrow(/number must be a phone number/);
    expect(() => toJid('12', 'statusJidList[0]')).toThrow(/statusJidList\[0\]/);
  });
});

describe('message status progression', () => {
  it('records implied steps and ignores stale receipts', () => {
    expect(statusSteps('PENDING', 'READ')).toEqual(['SERVER_ACK', 'DELIVERY_ACK', 'READ']);
    expect(statusSteps('SERVER_ACK', 'DELIVERY_ACK')).toEqual(['DELIVERY_ACK']);
    expect(statusSteps('READ', 'DELIVERY_ACK')).toEqual([]);
    expect(statusSteps('PENDING', 'ERROR')).toEqual(['ERROR']);
    expect(statusSteps('ERROR', 'READ')).toEqual([]);
  });
});

describe('event catalogue', () => {
  it('has Evolution\'s 31 events with wire names and suffixes', () => {
    expect(eventNames).toHaveLength(31);
    expect(wireName('MESSAGES_UPSERT')).toBe('messages.upsert');
    expect(eventSuffix('GROUP_PARTICIPANTS_UPDATE')).toBe('group-participants-update');
    expect(eventSuffix('TYPEBOT_CHANGE_STATUS')).toBe('typebot-change-status');
    expect(resolveEventName('GROUPS_UPDATE')).toBe('GROUP_UPDATE');
    expect(resolveEventName('messages.upsert')).toBe('MESSAGES_UPSERT');
    expect(resolveEventName('NOPE')).toBeUndefined();
  });
});

describe('small formats', () => {
  it('turns colours into ARGB integers', () => {
    expect(argbFromColor('#008000')).toBe(0xff008000);
    expect(argbFromColor('80FF0000')).toBe(0x80ff0000);
    expect(() => argbFromColor('green')).toThrow(/backgroundColor/);
  });

  it('seals and opens secrets, refusing tampered ones', () => {
    const box = new SecretsBox(randomBytes(32));
    const sealed = box.seal('top-secret');
    expect(sealed).not.toContain('top-secret');
    expect(box.open(sealed)).toBe('top-secret');
    // Flip one bit of the ciphertext (replacing base64 characters could leave the decoded bytes unchanged).
    const [version, iv, tag, body] = sealed.split('.');
    const tampered = Buffer.from(body, 'base64url');
    tampered[0] ^= 1;
    expect(() => box.open(`${version}.${iv}.${tag}.${tampered.toString('base64url')}`)).toThrow();
  });
});

describe('known API key digests', () => {
  it('give the SHA-256 of the key, and keep only keys said to have authenticated', () => {
    const digests = new KnownKeyDigests(2);
    const first = digests.of('key-one');
    expect(first.bytes.equals(keyDigest('key-one'))).toBe(true);
    expect(first.hex).toBe(createHash('sha256').update('key-one').digest('hex'));
    // Not remembered: each look computes it again (a new object).
    expect(digests.of('key-one')).not.toBe(first);
    digests.remember('key-one', first);
    expect(digests.of('key-one')).toBe(first);
    // Full: it starts over rather than growing.
    digests.remember('key-two', digests.of('key-two'));
    digests.remember('key-three', digests.of('key-three'));
    expect(digests.of('key-one')).not.toBe(first);
    expect(digests.of('key-one').hex).toBe(first.hex);
  });
});

describe('webhook delivery headers', () => {
  it('sends the content type once, whatever the configured headers say, and keeps the custom ones', () => {
    const headers = deliveryHeaders({ custom: { 'Content-Type': 'application/json', autorization: 'Bearer x' }, secret: undefined, eventId: 'e1', body: '{}' });
    expect(Object.keys(headers).filter((name) => name.toLowerCase() === 'content-type')).toEqual(['Content-Type']);
    expect(headers.autorization).toBe('Bearer x');
  });

  it('accepts Content-Type only as application/json, and refuses the other headers Switchboard sets', () => {
    expect(customHeaderProblem('Content-Type', 'application/json')).toBeUndefined();
    expect(customHeaderProblem('content-type', 'Application/JSON; charset=utf-8')).toBeUndefined();
    expect(customHeaderProblem('Content-Type', 'text/plain')).toMatch(/always application\/json/);
    expect(customHeaderProblem('Content-Length', '10')).toMatch(/set by Switchboard itself/);
    expect(customHeaderProblem('webhook-signature', 'v1,forged')).toMatch(/set by Switchboard itself/);
  });
});
