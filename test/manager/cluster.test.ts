// The manager's Cluster page in real Chromium against the real service: one SQLite node marked as this node with the
// instances it owns, hidden from an instance key; two PostgreSQL nodes on one schema, one stopping while the page
// watches (it turns stopped without a reload, its instances taken over), the page of the stopped node saying so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startApp, startFleet, storeTargets, type TestApp } from '../support/harness.js';
import { chromiumAvailable, launchChromium, loggedInPage, screenshotPath } from '../support/browser.js';
import { uniqueName } from '../support/unique.js';
import { sleep } from '../support/wait.js';

const available = chromiumAvailable();
const targets = await storeTargets();
const postgres = targets.find((target) => target.name === 'postgres');

/** A cell of a node's row, as the table shows it. */
const cell = (page: Page, nodeId: string, column: string) => page.locator(`table.cluster tr[data-node="${nodeId}"] td[data-label="${column}"]`);

/** A node's state badge (alive, dead or stopped, as the API says). */
const state = (page: Page, nodeId: string) => cell(page, nodeId, 'State').locator('.badge');

/** The figure of a tile on top of the page. */
const tile = (page: Page, label: string) => page.locator('.tile', { has: page.getByText(label, { exact: true }) }).locator('.tile-value');

/** Waits (bounded) until the element's text is exactly `text` (spaces around aside). */
const showsExactly = (locator: ReturnType<Page['locator']>, text: string, timeout = 15_000) =>
  locator.filter({ hasText: new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`) }).waitFor({ timeout });

async function createInstances(t: TestApp, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const created = await t.api('POST', 'instance/create', { body: { instanceName: uniqueName('fleet'), integration: 'SANDBOX' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
}

async function openCluster(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Cluster' }).click();
  await page.getByRole('heading', { name: 'Cluster' }).waitFor();
  await page.locator('table.cluster').waitFor();
}

describe.skipIf(!available)('the Cluster page in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('on SQLite shows the one node, marked this node, owning every instance, and says the store is single-node', async () => {
    const [sqlite] = targets;
    if (!sqlite) throw new Error('no SQLite target');
    const t = await startApp(sqlite, { NODE_ID: 'solo-node' });
    try {
      await createInstances(t, 3);
      const page = await loggedInPage(browser, t.url, t.globalKey);
      await openCluster(page);
      expect(await page.locator('table.cluster tbody tr').count()).toBe(1);
      await cell(page, 'solo-node', 'Node').getByText('this node', { exact: true }).waitFor();
      await showsExactly(cell(page, 'solo-node', 'Address'), t.url);
      await showsExactly(state(page, 'solo-node'), 'alive');
      await showsExactly(cell(page, 'solo-node', 'Instances owned'), '3');
      expect(await cell(page, 'solo-node', 'Last heartbeat').textContent()).toMatch(/just now|\d+ s ago/);
      await page.getByText('This store (SQLite) is single-node').waitFor();
      await showsExactly(tile(page, 'Nodes alive'), '1 of 1');
      await showsExactly(tile(page, 'Instances owned'), '3');
      await showsExactly(tile(page, 'Answered by'), 'solo-node');

      // It keeps asking while open (a new instance shows up by itself) and stops once the page is left.
      await createInstances(t, 1);
      await showsExactly(cell(page, 'solo-node', 'Instances owned'), '4');
      let asked = 0;
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === '/messenger/cluster') asked++;
      });
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Instances' }).click();
      await page.getByRole('heading', { name: 'Instances' }).waitFor();
      await sleep(4000);
      expect(asked).toBe(0);
      await page.close();

      // An instance key, which GET /cluster refuses: no Cluster link, and the address explains instead of failing.
      const listed = await t.api('GET', 'instance/fetchInstances');
      const own = await loggedInPage(browser, t.url, listed.body[0].instance.apikey);
      try {
        expect(await own.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Cluster' }).count()).toBe(0);
        await own.goto(`${t.url}/manager#/cluster`);
        await own.getByRole('heading', { name: 'Cluster' }).waitFor();
        await own.getByText('The cluster view needs the global key').waitFor();
        expect(await own.locator('table.cluster').count()).toBe(0);
      } finally {
        await own.close();
      }
    } finally {
      await t.close();
    }
  });

  it.skipIf(!postgres?.available)(
    'on PostgreSQL lists both nodes of one schema; a node stopping turns stopped without a reload, its instances taken over',
    async () => {
      const fleet = await startFleet(2, { NODE_HEARTBEAT_INTERVAL_MS: '200', NODE_DEAD_AFTER_MS: '2000' });
      try {
        const [one, two] = fleet.nodes as [TestApp, TestApp];
        await createInstances(one, 4);
        const page = await loggedInPage(browser, one.url, one.globalKey);
        const onStopping = await loggedInPage(browser, two.url, two.globalKey);
        await openCluster(page);
        await openCluster(onStopping);

        await showsExactly(state(page, 'node-1'), 'alive');
        await showsExactly(state(page, 'node-2'), 'alive');
        await showsExactly(cell(page, 'node-1', 'Address'), one.url);
        await showsExactly(cell(page, 'node-2', 'Address'), two.url);
        await cell(page, 'node-1', 'Node').getByText('this node', { exact: true }).waitFor();
        expect(await cell(page, 'node-2', 'Node').getByText('this node').count()).toBe(0);
        // Each page marks the node that answered it.
        await cell(onStopping, 'node-2', 'Node').getByText('this node', { exact: true }).waitFor();
        await showsExactly(tile(page, 'Nodes alive'), '2 of 2');
        await showsExactly(tile(page, 'Instances owned'), '4');
        expect(await page.getByText('single-node').count()).toBe(0);

        // The page is never reloaded from here on: a mark left in the window must still be there at the end.
        await page.evaluate(() => Object.assign(window, { keptSinceStop: true }));
        await two.close();

        await showsExactly(state(page, 'node-2'), 'stopped');
        await showsExactly(tile(page, 'Nodes alive'), '1 of 2');
        await showsExactly(cell(page, 'node-2', 'Instances owned'), '0');
        await showsExactly(cell(page, 'node-1', 'Instances owned'), '4');
        expect(await page.evaluate(() => (window as { keptSinceStop?: boolean }).keptSinceStop)).toBe(true);
        await page.screenshot({ path: screenshotPath('manager-cluster.png') });

        // The page of the node that stopped says it cannot reach it, and keeps what it last saw.
        await onStopping.getByText('The service cannot be reached').waitFor({ timeout: 15_000 });
        await showsExactly(state(onStopping, 'node-2'), 'alive');
        await page.close();
        await onStopping.close();
      } finally {
        await fleet.close();
      }
    },
    90_000,
  );
});
