// @ts-check
// Runs `npm run build` when the compiled service is missing or older than its sources, so `npm start` runs a current build.
// Plain JavaScript: it runs before anything is compiled, without tsx.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
/** Written after a successful build: its time is the build's. */
const stamp = join(root, 'dist', '.build-stamp');
/** What the build reads: folders of sources (those present) and the top-level files that shape the build. */
const sourceFolders = ['src', 'manager', 'web'];
const buildFiles = /^(package\.json|package-lock\.json|tsconfig.*\.json|vite\.config\..*)$/;

/** The newest modification time (ms) of the files under `path`. */
function newest(path) {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    latest = Math.max(latest, newest(join(path, entry)));
  }
  return latest;
}

function sourcesTime() {
  let latest = 0;
  for (const folder of sourceFolders) if (existsSync(join(root, folder))) latest = Math.max(latest, newest(join(root, folder)));
  for (const file of readdirSync(root)) if (buildFiles.test(file)) latest = Math.max(latest, statSync(join(root, file)).mtimeMs);
  return latest;
}

function why() {
  if (!existsSync(join(root, 'dist', 'src', 'main.js')) || !existsSync(stamp)) return 'no build yet';
  return sourcesTime() > statSync(stamp).mtimeMs ? 'the sources changed since the last build' : null;
}

const reason = why();
if (reason) {
  process.stderr.write(`Building the service (${reason}): npm run build\n`);
  const built = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (built.status !== 0) {
    process.stderr.write('The build failed (see above); nothing was started.\n');
    process.exit(built.status ?? 1);
  }
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
