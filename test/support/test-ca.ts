// A certificate authority for the tests' TLS servers (an HTTPS proxy), made once per run with openssl and trusted by
// every test process: NODE_EXTRA_CA_CERTS is read when a process starts, so it is set here, before the forks start.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the files are (`ca.pem`; `server.pem` / `server.key` for 127.0.0.1 and localhost, signed by it; and
 * `untrusted.pem` / `untrusted.key`, self-signed for the same); unset without openssl.
 */
export const testTlsDirVariable = 'SWITCHBOARD_TEST_TLS_DIR';

const prefix = 'sb-test-ca-';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Switchboard test CA');
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
    writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    const sign = ['-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'server.ext'];
    openssl('x509', '-req', '-in', 'server.csr', '-out', 'server.pem', ...sign);
    // And one nobody trusts: self-signed, for the same addresses.
    const names = 'subjectAltName=IP:127.0.0.1,DNS:localhost';
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'untrusted.key',
      '-out',
      'untrusted.pem',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      names,
    );
    process.env.NODE_EXTRA_CA_CERTS = join(dir, 'ca.pem');
    process.env[testTlsDirVariable] = dir;
  } catch (error) {
    // The tests that need it say so (and fail under REQUIRE_SERVICES=1).
    process.stderr.write(`\n*** no test certificate authority (openssl: ${(error as Error).message.split('\n')[0]}): HTTPS proxy tests will skip ***\n\n`);
  }
  // Kept after the run: a test process the pool starts as the run ends still reads NODE_EXTRA_CA_CERTS (and warns when
  // the file is gone). The folders of earlier runs go here instead.
  removeEarlierRuns(dir);
  return () => undefined;
}

/** Removes the certificate folders of runs that started more than a day ago (a run still going keeps its own). */
function removeEarlierRuns(current: string): void {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of readdirSync(tmpdir())) {
    const path = join(tmpdir(), name);
    if (!name.startsWith(prefix) || path === current) continue;
    try {
      if (statSync(path).mtimeMs < dayAgo) rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone meanwhile.
    }
  }
}
