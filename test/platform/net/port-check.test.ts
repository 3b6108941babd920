// The HTTP port asked before the service starts: a port in use or an address not of this machine is one start-up line.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ensurePortFree } from '../../../src/platform/net/port-check.js';
import { StartupError } from '../../../src/platform/startup-error.js';
import { freePort } from '../../support/service-process.js';

describe('the port check before start', () => {
  it('passes on a free port and leaves it free', async () => {
    const port = await freePort();
    await ensurePortFree('127.0.0.1', port);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('names SERVER_PORT when the port is in use', async () => {
    const port = await freePort();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      const failure = ensurePortFree('127.0.0.1', port);
      await expect(failure).rejects.toBeInstanceOf(StartupError);
      await expect(failure).rejects.toThrow(new RegExp(`^SERVER_PORT: port ${port} is already in use`));
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it('names SERVER_HOST when the address is not one of this machine', async () => {
    // 198.51.100.0/24 (TEST-NET-2) is reserved for documentation: no machine should have it.
    await expect(ensurePortFree('198.51.100.77', await freePort())).rejects.toThrow(/^SERVER_HOST: cannot listen on 198\.51\.100\.77/);
  });
});
