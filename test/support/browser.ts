// Real Chromium for the manager's tests (Debian's `chromium` package, driven by playwright-core), and page helpers.
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { serviceAvailable } from './required-services.js';

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether Chromium is installed: absent, a loud skip, or a failure under REQUIRE_SERVICES=1 (`.ci/run` installs it). */
export function chromiumAvailable(): boolean {
  return serviceAvailable(
    'Chromium',
    executablePath,
    existsSync(executablePath) ? null : 'not installed (apt-get install chromium)',
    'the manager browser tests are',
  );
}

/**
 * Where a screenshot named `name` goes: docs/ (the manager guide's pictures) when UPDATE_SCREENSHOTS=1, else a
 * temporary folder, so that a test run leaves the checkout as it was (a screenshot differs in its pixels run to run).
 */
export function screenshotPath(name: string): string {
  if (process.env.UPDATE_SCREENSHOTS === '1') return fileURLToPath(new URL(`../../docs/${name}`, import.meta.url));
  const folder = join(tmpdir(), 'switchboard-screenshots');
  mkdirSync(folder, { recursive: true });
  return join(folder, name);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    timeout: 30_000,
  });
}

/** A new tab on the manager, logged in with `key` (the login form, as a person does it). */
export async function loggedInPage(browser: Browser, baseUrl: string, key: string, viewport = { width: 1280, height: 860 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  page.setDefaultTimeout(15_000);
  await page.goto(`${baseUrl}/manager`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
  return page;
}
