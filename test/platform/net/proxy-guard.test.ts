// The outbound address guard with an instance proxy: the proxy's own address is guarded, and destinations the guard
// refuses are refused before anything reaches the proxy (the proxy resolves names, so names are checked here first).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchMedia } from '../../../src/media/fetch-url.js';
import type { ProxySettings } from '../../../src/core/proxy.js';
import { probeProxy } from '../../../src/platform/net/proxy-probe.js';
import { CodedError } from '../../../src/core/errors.js';
import { startHttpProxy, type TestProxy } from '../../support/proxies.js';

const failure = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(CodedError);
    return (error as CodedError).messages.join('; ');
  }
  throw new Error('expected a refusal');
};

describe('media downloads through a proxy, guarded', () => {
  let proxy: TestProxy;
  let server: Server;
  let port: number;
  let settings: ProxySettings;
  const opts = (denyPrivate: boolean) => ({ maxBytes: 1_000_000, timeoutMs: 5_000, field: 'media', denyPrivate, proxy: settings });

  beforeAll(async () => {
    proxy = await startHttpProxy();
    settings = { protocol: 'http', host: '127.0.0.1', port: proxy.port, username: null, password: null };
    server = createServer((_req, res) => res.end('bytes'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('goes through the proxy when the guard allows the destination and the proxy', async () => {
    const fetched = await fetchMedia(new URL(`http://127.0.0.1:${port}/file.bin`), opts(false));
    expect(fetched.bytes.toString()).toBe('bytes');
    expect(proxy.seen).toContain(`127.0.0.1:${port}`);
  });

  it('refuses a metadata address as destination without asking the proxy', async () => {
    const before = proxy.seen.length;
    expect(await failure(fetchMedia(new URL('http://169.254.169.254/latest/meta-data'), opts(false)))).toMatch(
      /forbidden address \(169\.254\.169\.254\).*metadata/,
    );
    expect(proxy.seen.length).toBe(before);
  });

  it('refuses a name resolving here to a forbidden address (OUTBOUND_DENY_PRIVATE) before the proxy sees it', async () => {
    const before = proxy.seen.length;
    const message = await failure(fetchMedia(new URL(`http://localhost:${port}/file.bin`), opts(true)));
    expect(message).toMatch(/media URL points to a forbidden address .*localhost resolves to/);
    expect(proxy.seen.length).toBe(before);
  });

  it('refuses a proxy at a private address with OUTBOUND_DENY_PRIVATE (fetch and probe say why)', async () => {
    const message = await failure(fetchMedia(new URL('http://93.184.215.14/file.bin'), opts(true)));
    expect(message).toBe(
      `media URL could not be fetched through the instance's proxy: the proxy http://127.0.0.1:${proxy.port} is at an address outbound requests may not use (loopback addresses are not allowed)`,
    );
    expect(await probeProxy(settings, { denyPrivate: true })).toBe(
      `the proxy http://127.0.0.1:${proxy.port} is at an address outbound requests may not use (loopback addresses are not allowed)`,
    );
    expect(await probeProxy(settings, { denyPrivate: false })).toBeNull();
  });
});
