// `npm start` runs the compiled service, building it first when there is no build or the sources are newer; `npm run
// dev` runs the sources through tsx. The build-if-stale step is run for real on a small project of its own.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, root), 'utf8');
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

describe('the start scripts', () => {
  it('npm start builds when needed and runs the compiled entry with the same flags as the image; npm run dev runs the sources', () => {
    expect(scripts.start).toBe('node scripts/build-if-stale.mjs && node --max-semi-space-size=64 dist/src/main.js');
    // The Docker image runs the same compiled entry the same way.
    expect(read('Dockerfile')).toContain('CMD ["node", "--max-semi-space-size=64", "dist/src/main.js"]');
    expect(scripts.dev).toMatch(/^tsx watch .*src\/main\.ts$/);
    // The build is `npm run build` (other parts add their own builds to it), and it writes what start runs.
    expect(scripts.build).toMatch(/tsc -p tsconfig\.build\.json/);
    expect(JSON.parse(read('tsconfig.json')).compilerOptions.outDir).toBe('dist');
  });
});

describe('build-if-stale', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A project with the real script whose `build` counts its runs and writes dist/src/main.js (or fails when told). */
  function project(): { dir: string; run(): { status: number | null; stderr: string }; builds(): number; age(path: string, secondsAgo: number): void } {
    const dir = mkdtempSync(join(tmpdir(), 'sb-start-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'scripts'));
    mkdirSync(join(dir, 'src'));
    copyFileSync(new URL('scripts/build-if-stale.mjs', root), join(dir, 'scripts', 'build-if-stale.mjs'));
    writeFileSync(join(dir, 'src', 'main.ts'), 'export {};\n');
    const build = [
      "const fs = require('node:fs');",
      "if (fs.existsSync('fail-build')) process.exit(3);",
      "fs.appendFileSync('builds.txt', 'x');",
      "fs.mkdirSync('dist/src', { recursive: true });",
      "fs.writeFileSync('dist/src/main.js', '');",
    ].join(' ');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fixture', private: true, scripts: { build: `node -e "${build}"` } }));
    return {
      dir,
      run() {
        const result = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: dir, encoding: 'utf8' });
        return { status: result.status, stderr: result.stderr };
      },
      builds: () => (existsSync(join(dir, 'builds.txt')) ? readFileSync(join(dir, 'builds.txt'), 'utf8').length : 0),
      age(path, secondsAgo) {
        const at = new Date(Date.now() - secondsAgo * 1000);
        utimesSync(join(dir, path), at, at);
      },
    };
  }

  it('builds when there is no build, not again while nothing changed, and again once a source is newer', () => {
    const p = project();
    p.age('src/main.ts', 60);
    p.age('package.json', 60);
    const first = p.run();
    expect(first.status).toBe(0);
    expect(first.stderr).toContain('Building the service (no build yet): npm run build');
    expect(p.builds()).toBe(1);
    expect(existsSync(join(p.dir, 'dist', '.build-stamp'))).toBe(true);

    expect(p.run()).toEqual({ status: 0, stderr: '' });
    expect(p.builds()).toBe(1);

    writeFileSync(join(p.dir, 'src', 'main.ts'), 'export const changed = true;\n');
    const again = p.run();
    expect(again.status).toBe(0);
    expect(again.stderr).toContain('the sources changed since the last build');
    expect(p.builds()).toBe(2);
  });

  it('a failed build stops the start with its exit code and says so', () => {
    const p = project();
    writeFileSync(join(p.dir, 'fail-build'), '');
    const result = p.run();
    expect(result.status).toBe(3);
    expect(result.stderr).toContain('The build failed (see above); nothing was started.');
    expect(existsSync(join(p.dir, 'dist', '.build-stamp'))).toBe(false);
  });
});
