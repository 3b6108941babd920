// How to start a worker thread's module written beside its host, whether the service runs compiled or from source.
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The module `name` (without extension) beside the module at `hostUrl`: the JavaScript file when the service runs
 * compiled; when it runs from TypeScript source (tsx, vitest), a small bootstrap that registers tsx in the thread
 * first (a worker does not inherit the loader hooks of its parent). Pass both to `new Worker(entry, { eval })`.
 */
export function threadEntry(hostUrl: string, name: string): { entry: URL | string; evaluate: boolean } {
  const extension = extname(fileURLToPath(hostUrl));
  const entry = new URL(`./${name}${extension}`, hostUrl);
  if (extension !== '.ts') return { entry, evaluate: false };
  const bootstrap = `import(${JSON.stringify(tsxEsmApi())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return { entry: bootstrap, evaluate: true };
}

/** tsx's ESM register API, found through its package.json (require.resolve would give the CommonJS variant). */
function tsxEsmApi(): string {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve('tsx/package.json');
  const manifest = require('tsx/package.json') as { exports: Record<string, { import?: { default?: string } }> };
  const target = manifest.exports['./esm/api']?.import?.default;
  if (!target) throw new Error('tsx has no ESM register API (tsx/esm/api)');
  return pathToFileURL(join(dirname(manifestPath), target)).href;
}
