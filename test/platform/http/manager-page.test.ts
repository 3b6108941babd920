// The manager page as the service serves it: no key needed, cache headers (hashed assets immutable, the page never
// cached stale), security headers allowing nothing from elsewhere, and a clear 404 page when it was never built.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { managerPage } from '../../../src/platform/http/manager-page.js';
import { startApp, storeTargets, type TestApp } from '../../support/harness.js';

describe('the built manager page at /manager', () => {
  let t: TestApp;
  beforeAll(async () => {
    const [sqlite] = await storeTargets();
    t = await startApp(sqlite);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers the page without a key, never cached stale, with headers that allow nothing from elsewhere', async () => {
    for (const path of ['/manager', '/manager/', '/manager/index.html']) {
      const answer = await fetch(`${t.url}${path}`);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
      expect(answer.headers.get('cache-control')).toBe('no-cache');
      const csp = answer.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toMatch(/connect-src 'self' ws:\/\/127\.0\.0\.1:\d+ wss:\/\/127\.0\.0\.1:\d+/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
      const html = await answer.text();
      expect(html).toContain('<div id="app">');
      // Every script and style is a file of this origin: nothing inline, nothing from a CDN.
      expect(html).not.toMatch(/<script>|<style>|https?:\/\//);
    }
  });

  it('serves the hashed assets as immutable, and answers 404 for a file that is not there', async () => {
    const html = await (await fetch(`${t.url}/manager`)).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/manager\/assets\/[^"]+)"/g)].map((match) => match[1]);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      const answer = await fetch(`${t.url}${asset}`);
      expect(answer.status, asset).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(answer.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /javascript/ : /text\/css/);
      expect(answer.headers.get('content-security-policy')).toContain("default-src 'self'");
    }
    for (const path of ['/manager/assets/missing-0000.js', '/manager/nothing-here.txt']) {
      const answer = await fetch(`${t.url}${path}`);
      expect(answer.status, path).toBe(404);
    }
    // Nothing outside the built folder: a way up is refused, never answered with the file.
    for (const path of ['/manager/..%2Fpackage.json', '/manager/..%2F..%2Fpackage.json', '/manager/%2e%2e/%2e%2e/package.json']) {
      const answer = await fetch(`${t.url}${path}`);
      expect([403, 404], path).toContain(answer.status);
      expect(await answer.text(), path).not.toContain('"scripts"');
    }
  });
});

describe('the manager page when it was never built', () => {
  let app: FastifyInstance;
  let empty: string;
  beforeAll(async () => {
    empty = mkdtempSync(join(tmpdir(), 'sb-no-manager-'));
    app = Fastify();
    await app.register(managerPage, { root: empty });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    rmSync(empty, { recursive: true, force: true });
  });

  it('answers a 404 page saying how to build it, never a 500', async () => {
    for (const url of ['/manager', '/manager/', '/manager/index.html']) {
      const answer = await app.inject({ method: 'GET', url });
      expect(answer.statusCode, url).toBe(404);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expect(answer.body).toContain('npm run build:manager');
      expect(answer.headers['content-security-policy']).toContain("default-src 'self'");
    }
    expect((await app.inject({ method: 'GET', url: '/manager/assets/index-abc.js' })).statusCode).toBe(404);
  });
});
