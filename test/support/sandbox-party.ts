// A linked sandbox instance whose events all go to a test receiver: the usual party of an over-HTTP messaging test.
import { expect } from 'vitest';
import type { Receiver, TestApp } from './harness.js';
import { uniqueName, uniqueNumber } from './unique.js';

export interface Party {
  name: string;
  number: string;
  owner: string;
}

/** Creates a SANDBOX instance, scans its QR code with a fresh number (and profile name), and points its webhook at `rx`. */
export async function sandboxParty(t: TestApp, rx: Receiver, prefix: string, profileName?: string): Promise<Party> {
  const name = uniqueName(prefix);
  const number = uniqueNumber('4915');
  const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX', qrcode: true } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const scan = await t.api('POST', 'sandbox/scan', { body: { code: created.body.qrcode.code, number, ...(profileName ? { profileName } : {}) } });
  expect(scan.status, JSON.stringify(scan.body)).toBe(200);
  const hook = await t.api('POST', `webhook/set/${name}`, { body: { webhook: { enabled: true, url: rx.url, events: [] } } });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  return { name, number, owner: scan.body.instance.owner };
}
