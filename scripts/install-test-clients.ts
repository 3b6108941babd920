// Installs the real client packages the tests drive (test/clients/*), from their lock files, when not installed yet.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const clientsDir = join(import.meta.dirname, '..', 'test', 'clients');

for (const client of readdirSync(clientsDir)) {
  const dir = join(clientsDir, client);
  const lock = join(dir, 'package-lock.json');
  const installed = join(dir, 'node_modules', '.package-lock.json');
  if (!existsSync(lock)) continue;
  // npm writes node_modules/.package-lock.json from the lock at install: the same packages when its list matches.
  const wanted = JSON.parse(readFileSync(lock, 'utf8')).packages as Record<string, unknown>;
  const have = existsSync(installed) ? (JSON.parse(readFileSync(installed, 'utf8')).packages as Record<string, unknown>) : {};
  const upToDate = Object.keys(wanted).every((path) => path === '' || path in have);
  if (upToDate) continue;
  console.log(`installing the test client ${client} (install scripts off)`);
  // Install scripts off: the n8n node's preinstall refuses any package manager but pnpm, and no client needs a build.
  execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });
}
