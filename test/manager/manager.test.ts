// The manager page in real Chromium against the real service: log in, create and link sandbox instances, chat with
// statuses ticking, send text and media, settings and webhook stored, a dead delivery redelivered, live events, an
// instance key's view, deleting with a confirmation, the XSS probe, health and a phone-width screen.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startApp, storeTargets, type TestApp } from '../support/harness.js';
import { chromiumAvailable, launchChromium, loggedInPage, screenshotPath } from '../support/browser.js';
import { uniqueName, uniqueNumber } from '../support/unique.js';
import { waitFor } from '../support/wait.js';

const available = chromiumAvailable();

/** A webhook receiver on a port of its own, which can be stopped and started again on the same port. */
async function receiverOn(port = 0) {
  const bodies: { event: string; data: unknown }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      bodies.push(JSON.parse(raw));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    bodies,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(!available)('the manager page in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const alice = { name: uniqueName('alice'), number: uniqueNumber('4917') };
  const bob = { name: uniqueName('bob'), number: uniqueNumber('4917') };

  beforeAll(async () => {
    const [sqlite] = await storeTargets();
    t = await startApp(sqlite, { WEBSOCKET_ENABLED: 'true', WEBSOCKET_GLOBAL_EVENTS: 'true', WEBHOOK_RETRY_MAX_ATTEMPTS: '2' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Creates a SANDBOX instance with the form and links it with "link with number"; the state turns open without reload. */
  async function createAndLink(p: Page, party: { name: string; number: string }, profileName: string, shot?: string) {
    await p.goto(`${t.url}/manager#/new`);
    await p.getByLabel('Name', { exact: true }).fill(party.name);
    await p.getByRole('button', { name: 'Create instance' }).click();
    await p.getByRole('heading', { name: `Instance ${party.name} created` }).waitFor();
    await p.getByRole('button', { name: 'Link it now' }).click();
    await p.getByTestId('qr').waitFor();
    if (shot) await p.screenshot({ path: screenshotPath(shot) });
    await p.getByLabel('Phone number').fill(party.number);
    await p.getByLabel('Profile name (optional)').fill(profileName);
    await p.getByRole('button', { name: 'Link with number' }).click();
    await p.getByTestId('linked').waitFor();
    await p.locator('.instance-head .badge', { hasText: 'open' }).waitFor();
  }

  it('refuses a wrong key with a message, and logs in with the global key', async () => {
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.setDefaultTimeout(15_000);
    await page.goto(`${t.url}/manager`);
    await page.screenshot({ path: screenshotPath('manager-login.png') });
    // From the keyboard: the key field has the label, Enter submits.
    await page.getByLabel('API key').fill('not-the-key-at-all');
    await page.keyboard.press('Enter');
    await page.getByText('That key is not valid').waitFor();
    expect(await page.getByRole('button', { name: 'Log out' }).count()).toBe(0);
    await page.getByLabel('API key').fill(t.globalKey);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Instances' }).waitFor();
    // The key lives in the tab's session storage only, never in the address.
    expect(page.url()).not.toContain(t.globalKey);
    expect(await page.evaluate(() => sessionStorage.getItem('switchboard.apikey'))).toBe(t.globalKey);
  });

  it('creates a SANDBOX instance and links it from the page, the state turning open without reload', async () => {
    await createAndLink(page, alice, 'Alice', 'manager-link.png');
    const listed = await t.api('GET', `instance/fetchInstances?instanceName=${alice.name}`);
    expect(listed.body[0].instance.status).toBe('open');
    expect(listed.body[0].instance.owner).toBe(`${alice.number}@s.whatsapp.net`);
    await page.goto(`${t.url}/manager#/`);
    const row = page.locator(`tr[data-instance="${alice.name}"]`);
    await row.locator('.badge', { hasText: 'open' }).waitFor();
    await row.getByText('Alice', { exact: true }).waitFor();
  });

  it('shows a second instance going open live when its code is scanned from outside the page', async () => {
    await page.goto(`${t.url}/manager#/new`);
    await page.getByLabel('Name', { exact: true }).fill(bob.name);
    await page.getByRole('button', { name: 'Create instance' }).click();
    await page.getByRole('button', { name: 'Link it now' }).click();
    await page.getByTestId('qr').waitFor();
    const qr = await t.api('GET', `instance/connect/${bob.name}`);
    expect(qr.body.code, JSON.stringify(qr.body)).toBeTruthy();
    // The phone scans: the page learns it by itself (websocket or polling), without a reload.
    const scan = await t.api('POST', 'sandbox/scan', { body: { code: qr.body.code, number: bob.number, profileName: 'Bob' } });
    expect(scan.status).toBe(200);
    await page.getByTestId('linked').waitFor();
    await page.locator('.instance-head .badge', { hasText: 'open' }).waitFor();
    await page.getByText('Bob', { exact: true }).first().waitFor();
  });

  it('exchanges messages in the chat view, the statuses ticking from sent to delivered to read', async () => {
    await page.goto(`${t.url}/manager#/instances/${alice.name}/chat`);
    await page.getByPlaceholder('New chat: number').fill(bob.number);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await page.getByLabel('Message', { exact: true }).fill('Hello Bob, from the manager');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const sent = page.locator('.bubble.out', { hasText: 'Hello Bob, from the manager' });
    await sent.waitFor();
    // Bob's side, in a tab of its own: the message arrives, and reading it there sends READ back to Alice.
    const bobPage = await loggedInPage(browser, t.url, t.globalKey);
    await bobPage.goto(`${t.url}/manager#/instances/${bob.name}/chat`);
    await bobPage.locator('.chat-item', { hasText: 'Alice' }).click();
    await bobPage.locator('.bubble.in', { hasText: 'Hello Bob, from the manager' }).waitFor();
    await expect.poll(() => sent.getAttribute('data-status'), { timeout: 15_000 }).toBe('READ');
    await sent.locator('.tick-READ').waitFor();
    const statuses = await t.api('POST', `chat/findStatusMessage/${alice.name}`, { body: { where: { remoteJid: bob.number } } });
    expect(statuses.body.map((s: { status: string }) => s.status)).toEqual(expect.arrayContaining(['SERVER_ACK', 'DELIVERY_ACK', 'READ']));
    // Bob answers from his tab; Alice's chat shows it without reload.
    await bobPage.getByLabel('Message', { exact: true }).fill('Hi Alice!');
    await bobPage.getByRole('button', { name: 'Send', exact: true }).click();
    await page.locator('.bubble.in', { hasText: 'Hi Alice!' }).waitFor();
    await page.screenshot({ path: screenshotPath('manager-chat.png') });
    await bobPage.close();
  });

  it('keeps a message holding markup as text (the XSS probe)', async () => {
    const probe = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
    // Injected with the playground's form, as a customer writing to the bot.
    await page.goto(`${t.url}/manager#/instances/${alice.name}/chat`);
    const inject = page.getByRole('form', { name: 'Inject an incoming message' });
    await inject.getByLabel('From (number)').fill('4930111222333');
    await inject.getByLabel("Sender's name (optional)").fill('<b onmouseover=alert(1)>Mallory</b>');
    await inject.getByLabel('Text').fill(probe);
    await inject.getByRole('button', { name: 'Inject' }).click();
    await inject.getByText(`Delivered to ${alice.name}.`).waitFor();
    await page.locator('.chat-item', { hasText: 'Mallory' }).click();
    const bubble = page.locator('.bubble.in', { hasText: 'onerror' });
    await bubble.waitFor();
    expect(await bubble.locator('.text').textContent()).toBe(probe);
    expect(await bubble.locator('.from').textContent()).toBe('<b onmouseover=alert(1)>Mallory</b>');
    expect(await page.locator('.bubbles img, .bubbles script, .bubbles b').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  });

  it('sends a text and a media file from the Send tab', async () => {
    await page.goto(`${t.url}/manager#/instances/${bob.name}/messages`);
    await page.getByLabel('To (number)').fill(alice.number);
    await page.getByLabel('Text').fill('Sent from the Send tab');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText(/^Queued \(PENDING, id /).waitFor();
    // A real PNG, drawn by the browser, sent as a media file.
    const png = Buffer.from(
      await page.evaluate(() => {
        const canvas = document.createElement('canvas');
        canvas.width = 64;
        canvas.height = 48;
        const context = canvas.getContext('2d');
        if (context) {
          context.fillStyle = '#0f766e';
          context.fillRect(0, 0, 64, 48);
        }
        return canvas.toDataURL('image/png').split(',')[1];
      }),
      'base64',
    );
    await page.getByLabel('Media file (optional)').setInputFiles({ name: 'square.png', mimeType: 'image/png', buffer: png });
    await page.getByLabel('Caption').fill('a green square');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText(/^Queued square\.png \(PENDING, id /).waitFor();
    await waitFor(
      async () => {
        const found = await t.api('POST', `chat/findMessages/${alice.name}`, { body: { where: { key: { remoteJid: bob.number } } } });
        const records = found.body.messages.records as { message: { conversation?: string; imageMessage?: { caption?: string; width?: number } } }[];
        const text = records.some((r) => r.message.conversation === 'Sent from the Send tab');
        const image = records.find((r) => r.message.imageMessage?.caption === 'a green square');
        return text && image?.message.imageMessage?.width === 64;
      },
      10_000,
      { what: 'the text and the image at alice' },
    );
  });

  it('changes settings and the webhook, stored as the API shows them; a bad URL is named beside its field', async () => {
    await page.goto(`${t.url}/manager#/instances/${bob.name}/settings`);
    await page.getByLabel('Reject calls').check();
    await page.getByLabel('Message sent to a rejected caller').fill('Busy, text me');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const settings = await t.api('GET', `settings/find/${bob.name}`);
    expect(settings.body).toMatchObject({ rejectCall: true, msgCall: 'Busy, text me', groupsIgnore: false });

    await page.goto(`${t.url}/manager#/instances/${bob.name}/events`);
    const webhook = page.getByRole('form', { name: 'Webhook' });
    await webhook.getByLabel('Enabled').check();
    await webhook.getByLabel('URL', { exact: true }).fill('ftp://example.com/hook');
    await webhook.getByRole('button', { name: 'Save webhook' }).click();
    await webhook.locator('.field.invalid .field-errors', { hasText: 'url must be an absolute http:// or https:// URL' }).waitFor();

    await webhook.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/bob-hook');
    await webhook.getByLabel('By events').check();
    await webhook.getByLabel('All events').uncheck();
    await webhook.getByLabel('CONNECTION_UPDATE', { exact: true }).check();
    await webhook.getByLabel('Make a new secret (shown once)').check();
    await webhook.getByRole('button', { name: 'Save webhook' }).click();
    await webhook.getByText('Webhook saved.').waitFor();
    const secret = await page.getByTestId('webhook-secret').textContent();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await page.setViewportSize({ width: 1280, height: 1400 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenshotPath('manager-events.png') });
    await page.setViewportSize({ width: 1280, height: 860 });
    const stored = await t.api('GET', `webhook/find/${bob.name}`);
    expect(stored.body).toMatchObject({ enabled: true, url: 'http://127.0.0.1:9/bob-hook', webhookByEvents: true, signed: true });
    expect([...stored.body.events].sort()).toEqual(['CONNECTION_UPDATE', 'MESSAGES_UPSERT']);
  });

  it('shows a failed delivery (receiver down) and redelivers it once the receiver is back', async () => {
    const first = await receiverOn();
    const port = first.port;
    await first.close();
    const hook = await t.api('POST', `webhook/set/${alice.name}`, {
      body: { webhook: { enabled: true, url: `http://127.0.0.1:${port}/hook`, events: ['MESSAGES_UPSERT'] } },
    });
    expect(hook.status).toBe(201);
    const injected = await t.api('POST', `sandbox/inject/${alice.name}`, { body: { from: '4930555666777', text: 'while the receiver is down' } });
    expect(injected.status).toBe(201);
    await waitFor(async () => (await t.api('GET', `webhook/deliveries/${alice.name}?status=dead`)).body.deliveries.length === 1, 10_000, {
      what: 'the delivery dead-lettered',
    });

    await page.goto(`${t.url}/manager#/instances/${alice.name}/deliveries`);
    await page.getByRole('button', { name: 'dead', exact: true }).click();
    const row = page.locator('tr[data-status="dead"]', { hasText: 'MESSAGES_UPSERT' });
    await row.waitFor();
    expect(await row.locator('td[data-label="Attempts"]').textContent()).toBe('2');
    // The instance list counts it as dead-lettered.
    const activity = await t.api('GET', 'instance/activity');
    expect(activity.body.instances.find((i: { instanceName: string }) => i.instanceName === alice.name).deliveries.dead).toBe(1);
    await page.screenshot({ path: screenshotPath('manager-deliveries.png') });

    const back = await receiverOn(port);
    try {
      await row.getByRole('button', { name: /Redeliver delivery/ }).click();
      await page.getByText('One delivery queued again.').waitFor();
      await page.getByRole('button', { name: 'delivered', exact: true }).click();
      await page.locator('tr[data-status="delivered"]', { hasText: 'MESSAGES_UPSERT' }).waitFor();
      await waitFor(() => back.bodies.some((body) => body.event === 'messages.upsert'), 10_000, { what: 'the redelivered event at the receiver' });
    } finally {
      await back.close();
    }
  });

  it("shows the instance's events live once its websocket is on", async () => {
    await page.goto(`${t.url}/manager#/instances/${alice.name}/live`);
    await page.locator('.badge', { hasText: 'connected' }).waitFor();
    await page.getByRole('button', { name: 'Send all its events to the websocket' }).click();
    await waitFor(async () => (await t.api('GET', `websocket/find/${alice.name}`)).body?.enabled === true, 5000, { what: 'websocket enabled' });
    await t.api('POST', `sandbox/inject/${alice.name}`, { body: { from: '4930999888777', text: 'live one', pushName: 'Eve' } });
    await page.locator('.event-log li', { hasText: 'messages.upsert' }).filter({ hasText: 'live one' }).waitFor();
    await page.screenshot({ path: screenshotPath('manager-live.png') });
  });

  it('gives an instance key its own instance only', async () => {
    const listed = await t.api('GET', `instance/fetchInstances?instanceName=${alice.name}`);
    const own = await loggedInPage(browser, t.url, listed.body[0].instance.apikey);
    try {
      await own.getByRole('heading', { name: alice.name }).waitFor();
      await own.getByText(`Instance key · ${alice.name}`).waitFor();
      expect(await own.getByRole('link', { name: 'New instance' }).count()).toBe(0);
      expect(await own.getByText(bob.name).count()).toBe(0);
      await own.goto(`${t.url}/manager#/instances/${bob.name}`);
      await own.getByText(`does not grant access to instance "${bob.name}"`).first().waitFor();
      expect(await own.getByRole('heading', { name: bob.name }).count()).toBe(0);
    } finally {
      await own.close();
    }
  });

  it('deletes an instance after a confirmation', async () => {
    const doomed = uniqueName('doomed');
    expect((await t.api('POST', 'instance/create', { body: { instanceName: doomed, integration: 'SANDBOX' } })).status).toBe(201);
    await page.goto(`${t.url}/manager#/instances/${doomed}`);
    // Looking at a closed instance does not start linking it.
    await page.getByRole('button', { name: 'Start linking' }).waitFor();
    expect((await t.api('GET', `instance/connectionState/${doomed}`)).body.instance.state).toBe('close');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    // Nothing happens before the confirmation; Cancel leaves it.
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await t.api('GET', `instance/connectionState/${doomed}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByRole('heading', { name: 'Instances' }).waitFor();
    expect((await t.api('GET', `instance/connectionState/${doomed}`)).status).toBe(404);
    expect(await page.locator(`tr[data-instance="${doomed}"]`).count()).toBe(0);
  });

  it('shows health at a glance, and fits a phone-width screen', async () => {
    // The list as it stands after the tests above: both instances open, a delivery of alice dead-lettered.
    await page.goto(`${t.url}/manager#/`);
    await page.locator(`tr[data-instance="${bob.name}"] .badge`, { hasText: 'open' }).waitFor();
    await page.locator(`tr[data-instance="${alice.name}"] td.bad`).waitFor();
    await page.screenshot({ path: screenshotPath('manager-instances.png') });
    await page.goto(`${t.url}/manager#/health`);
    await page.locator('.tile', { hasText: 'Store' }).getByText('sqlite').waitFor();
    await page.getByRole('link', { name: /API documentation/ }).waitFor();
    await page.screenshot({ path: screenshotPath('manager-health.png') });
    const phone = await loggedInPage(browser, t.url, t.globalKey, { width: 390, height: 844 });
    try {
      await phone.locator(`tr[data-instance="${alice.name}"]`).waitFor();
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await phone.screenshot({ path: screenshotPath('manager-phone.png') });
    } finally {
      await phone.close();
    }
  });
});

describe.skipIf(!available)('the manager page without the websocket (WEBSOCKET_ENABLED=false)', () => {
  let t: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    const [sqlite] = await storeTargets();
    t = await startApp(sqlite);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('keeps the list current by polling: an instance linked elsewhere turns open without reload', async () => {
    const name = uniqueName('polled');
    const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX', qrcode: true } });
    expect(created.status).toBe(201);
    const page = await loggedInPage(browser, t.url, t.globalKey);
    try {
      await page.getByText('refreshing every few seconds').waitFor();
      const row = page.locator(`tr[data-instance="${name}"]`);
      await row.locator('.badge', { hasText: 'connecting' }).waitFor();
      const scan = await t.api('POST', 'sandbox/scan', { body: { code: created.body.qrcode.code, number: uniqueNumber('4916'), profileName: 'Polly' } });
      expect(scan.status).toBe(200);
      await row.locator('.badge', { hasText: 'open' }).waitFor();
      await row.getByText('Polly', { exact: true }).waitFor();
    } finally {
      await page.close();
    }
  });
});
