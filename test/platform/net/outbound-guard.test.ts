// Tests for the outbound address policy and the guarded undici dispatcher.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request, type Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLiteralHost, findForbiddenAddressError, isForbiddenAddress, type AddressPolicy } from '../../../src/platform/net/address-policy.js';
import { createGuardedDispatcher, createGuardedLookup, type Resolver } from '../../../src/platform/net/guarded-dispatcher.js';

const ALLOW: AddressPolicy = { denyPrivate: false };
const DENY: AddressPolicy = { denyPrivate: true };

describe('isForbiddenAddress', () => {
  it.each([
    '169.254.169.254',
    '169.254.0.1',
    'fd00:ec2::254',
    'FD00:EC2:0:0:0:0:0:254',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '64:ff9b::169.254.169.254',
  ])('always refuses the metadata address %s', (ip) => {
    expect(isForbiddenAddress(ip, ALLOW)).toMatch(/metadata/);
    expect(isForbiddenAddress(ip, DENY)).toMatch(/metadata/);
  });

  it.each([
    ['127.0.0.1', /loopback/],
    ['127.255.255.254', /loopback/],
    ['::1', /loopback/],
    ['0:0:0:0:0:0:0:1', /loopback/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['fc00::1', /private/],
    ['fd12:3456::1', /private/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['febf::1', /link-local/],
    ['0.0.0.0', /this network/],
    ['0.1.2.3', /this network/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.255', /carrier-grade NAT/],
    ['::ffff:127.0.0.1', /loopback/],
    ['::ffff:7f00:1', /loopback/],
    ['[::ffff:10.0.0.1]', /private/],
    ['::ffff:192.168.0.1', /private/],
    ['::ffff:100.64.0.1', /carrier-grade NAT/],
    ['::', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['255.255.255.255', /broadcast/],
  ])('refuses %s only when private addresses are denied', (ip, reason) => {
    expect(isForbiddenAddress(ip, DENY)).toMatch(reason);
    expect(isForbiddenAddress(ip, ALLOW)).toBeNull();
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '169.255.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', 'fec0::1'])(
    'allows the public address %s',
    (ip) => {
      expect(isForbiddenAddress(ip, DENY)).toBeNull();
    },
  );

  it.each(['', 'localhost', '256.1.1.1', '1.2.3', '::ffff:1.2.3.999', '1::2::3'])('refuses %j as not an IP address', (ip) => {
    expect(isForbiddenAddress(ip, ALLOW)).toBe('not a valid IP address');
  });
});

describe('checkLiteralHost', () => {
  it('catches IP literals in every spelling the URL parser accepts', () => {
    expect(checkLiteralHost(new URL('http://169.254.169.254/latest/meta-data/'), ALLOW)?.address).toBe('169.254.169.254');
    expect(checkLiteralHost(new URL('http://[::ffff:169.254.169.254]/'), ALLOW)?.reason).toMatch(/metadata/);
    expect(checkLiteralHost(new URL('http://[fd00:ec2::254]/'), ALLOW)).not.toBeNull();
    // WHATWG URL normalises hex/short IPv4 forms, so these are caught as 127.0.0.1
    expect(checkLiteralHost(new URL('http://0x7f.1/'), DENY)?.address).toBe('127.0.0.1');
    expect(checkLiteralHost(new URL('http://2130706433/'), DENY)?.address).toBe('127.0.0.1');
    expect(checkLiteralHost(new URL('http://127.0.0.1:8080/'), ALLOW)).toBeNull();
  });

  it('leaves host names to the dispatcher', () => {
    expect(checkLiteralHost(new URL('http://localhost/'), DENY)).toBeNull();
    expect(checkLiteralHost(new URL('https://example.com/x'), DENY)).toBeNull();
  });
});

describe('createGuardedLookup', () => {
  const fixed =
    (...addresses: string[]): Resolver =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  const run = (resolver: Resolver, policy: AddressPolicy, all: boolean) =>
    new Promise<{ err: Error | null; address: unknown; family?: number }>((resolve) => {
      createGuardedLookup({ ...policy, resolve: resolver })('media.example', { all }, (err, address, family) => resolve({ err, address, family }));
    });

  it('drops forbidden answers and returns only allowed ones', async () => {
    const r = await run(fixed('10.0.0.5', '93.184.216.34', '169.254.169.254'), DENY, true);
    expect(r.err).toBeNull();
    expect(r.address).toEqual([{ address: '93.184.216.34', family: 4 }]);
    const single = await run(fixed('169.254.169.254', '2606:2800:220:1::1'), ALLOW, false);
    expect(single).toMatchObject({ err: null, address: '2606:2800:220:1::1', family: 6 });
  });

  it('fails with a ForbiddenAddressError when nothing allowed remains', async () => {
    const r = await run(fixed('127.0.0.1', '::1'), DENY, true);
    const forbidden = findForbiddenAddressError(r.err);
    expect(forbidden).not.toBeNull();
    expect(forbidden!.host).toBe('media.example');
    expect(forbidden!.address).toBe('127.0.0.1');
    expect(forbidden!.reason).toMatch(/loopback/);
  });

  it('passes resolver failures through', async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND media.example'), { code: 'ENOTFOUND' });
    };
    const r = await run(failing, ALLOW, false);
    expect((r.err as NodeJS.ErrnoException).code).toBe('ENOTFOUND');
  });
});

describe('createGuardedDispatcher', () => {
  let server: Server;
  let port: number;
  let hits = 0;
  const agents: Agent[] = [];
  const agent = (opts: Parameters<typeof createGuardedDispatcher>[0]) => {
    const a = createGuardedDispatcher(opts);
    agents.push(a);
    return a;
  };

  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.close()));
    await new Promise((resolve) => server.close(resolve));
  });

  const rejection = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      return err;
    }
    throw new Error('expected the request to fail');
  };

  it('connects to loopback when private addresses are allowed', async () => {
    const res = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent({ denyPrivate: false }) });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('ok');
  });

  it('refuses a literal loopback IP with denyPrivate, without sending anything', async () => {
    const before = hits;
    const err = await rejection(request(`http://127.0.0.1:${port}/`, { dispatcher: agent({ denyPrivate: true }) }));
    expect(findForbiddenAddressError(err)?.reason).toMatch(/loopback/);
    expect(hits).toBe(before);
  });

  it('refuses a host name that resolves to loopback with denyPrivate', async () => {
    const before = hits;
    const err = await rejection(request(`http://localhost:${port}/`, { dispatcher: agent({ denyPrivate: true }) }));
    const forbidden = findForbiddenAddressError(err);
    expect(forbidden?.host).toBe('localhost');
    expect(forbidden?.reason).toMatch(/loopback/);
    expect(hits).toBe(before);
  });

  it('always refuses the metadata address, even with private addresses allowed', async () => {
    const started = Date.now();
    const err = await rejection(request('http://169.254.169.254/latest/meta-data/', { dispatcher: agent({ denyPrivate: false }) }));
    expect(findForbiddenAddressError(err)?.address).toBe('169.254.169.254');
    expect(Date.now() - started).toBeLessThan(1000); // refused before any connection attempt
  });

  it('connects to the address the guarded lookup approved, not a fresh DNS answer', async () => {
    let calls = 0;
    const resolve: Resolver = async () => {
      calls++;
      return [
        { address: '169.254.169.254', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ];
    };
    const res = await request(`http://rebind.invalid:${port}/`, { dispatcher: agent({ denyPrivate: false, resolve }) });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('ok');
    expect(calls).toBe(1);
  });

  it('refuses a host name whose every answer is forbidden', async () => {
    const resolve: Resolver = async () => [{ address: '169.254.169.254', family: 4 }];
    const err = await rejection(request(`http://metadata.invalid:${port}/`, { dispatcher: agent({ denyPrivate: false, resolve }) }));
    expect(findForbiddenAddressError(err)).toMatchObject({ host: 'metadata.invalid', address: '169.254.169.254' });
  });
});
