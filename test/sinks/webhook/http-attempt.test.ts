// One webhook HTTP attempt (postWebhook) against a real node:http receiver on loopback: what each kind of answer,
// or no answer, becomes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook, type HttpAttempt } from '../../../src/sinks/webhook/http-attempt.js';

let server: Server;
let base = '';
const seen: { path: string; body: string; contentType: string | undefined }[] = [];
const dispatcher = new Agent();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8'), contentType: req.headers['content-type'] });
      if (req.url === '/big') {
        // A receiver that answers with far more than is worth reading (4 MB, streamed).
        res.writeHead(202, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let left = 64;
        const more = () => {
          while (left > 0) {
            left--;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        more();
      } else if (req.url === '/stall-body') {
        // Headers at once, then the body never ends.
        res.writeHead(201, { 'content-type': 'text/plain' });
        res.write('partial');
      } else if (req.url === '/hang') {
        // Never answers.
      } else if (req.url?.startsWith('/status/')) {
        res.writeHead(Number(req.url.slice('/status/'.length)));
        res.end('no');
      } else {
        res.writeHead(200, { 'content-length': '2' });
        res.end('ok');
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
  await dispatcher.close();
});

function attempt(path: string, overrides: Partial<HttpAttempt> = {}): HttpAttempt {
  return {
    url: `${base}${path}`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ path }),
    timeoutMs: 2000,
    dispatcher,
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe('postWebhook', () => {
  it('posts the body with its headers, path and query, and answers the status', async () => {
    expect(await postWebhook(attempt('/ok?token=abc'))).toEqual({ kind: 'response', status: 200 });
    expect(seen.at(-1)).toEqual({ path: '/ok?token=abc', body: JSON.stringify({ path: '/ok?token=abc' }), contentType: 'application/json' });
    expect(await postWebhook(attempt('/status/503'))).toEqual({ kind: 'response', status: 503 });
    expect(await postWebhook(attempt('/status/404'))).toEqual({ kind: 'response', status: 404 });
  });

  it('does not read a huge answer to its end: the status counts at once', async () => {
    const started = Date.now();
    expect(await postWebhook(attempt('/big'))).toEqual({ kind: 'response', status: 202 });
    expect(Date.now() - started).toBeLessThan(1500);
    // The connection pool still works afterwards.
    expect(await postWebhook(attempt('/ok'))).toEqual({ kind: 'response', status: 200 });
  });

  it('keeps the status of a receiver whose body stalls (after the time limit)', async () => {
    expect(await postWebhook(attempt('/stall-body', { timeoutMs: 300 }))).toEqual({ kind: 'response', status: 201 });
  });

  it('answers timeout when no status comes within the limit', async () => {
    const started = Date.now();
    expect(await postWebhook(attempt('/hang', { timeoutMs: 300 }))).toEqual({ kind: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('answers aborted when the sender stops, before or during the request', async () => {
    const before = new AbortController();
    before.abort();
    expect(await postWebhook(attempt('/ok', { signal: before.signal }))).toEqual({ kind: 'aborted' });
    const during = new AbortController();
    const pending = postWebhook(attempt('/hang', { signal: during.signal, timeoutMs: 5000 }));
    setTimeout(() => during.abort(), 100);
    expect(await pending).toEqual({ kind: 'aborted' });
  });

  it('describes a refused connection and an unusable URL as errors', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((done) => closed.close(() => done()));
    const refused = await postWebhook(attempt('', { url: `http://127.0.0.1:${port}/x` }));
    expect(refused).toMatchObject({ kind: 'error', forbidden: false });
    expect((refused as { error: string }).error).toMatch(/ECONNREFUSED/);
    expect(await postWebhook(attempt('', { url: 'ftp://example.test/x' }))).toMatchObject({ kind: 'error', error: expect.stringMatching(/protocol/) });
    expect(await postWebhook(attempt('', { url: 'not a url' }))).toMatchObject({ kind: 'error', forbidden: false });
  });
});
