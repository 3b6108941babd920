// Install on the Node versions the README names: which installed packages declare a newer Node than 20, and that they
// still load on this one (they are ES modules that Node 20.19+ loads through require). A new such package fails here.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as { packages: Record<string, { engines?: { node?: string } }> };
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };

/** The lowest Node major a `>=N…` engines range allows, or undefined for other forms. */
const lowestMajor = (range: string) => {
  const match = /^>=\s*v?(\d+)/.exec(range.trim());
  return match ? Number(match[1]) : undefined;
};

describe('Node.js versions', () => {
  it('the project asks for Node 20.19 or newer (require of ES modules, which two dependencies need)', () => {
    expect(manifest.engines.node).toBe('>=20.19');
    expect(readFileSync(new URL('README.md', root), 'utf8')).toContain('Node.js 20.19 or newer');
  });

  it('only content-disposition and cookie declare Node 22, and both load on this Node through require', () => {
    const newer = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && (lowestMajor(entry.engines?.node ?? '') ?? 0) > 20)
      .map(([path]) => path);
    expect(newer).toEqual(['node_modules/content-disposition', 'node_modules/cookie']);
    // What their dependents (@fastify/static, light-my-request) call, loaded the way they load it.
    const require = createRequire(new URL('package.json', root));
    expect(typeof require('content-disposition').create).toBe('function');
    expect(typeof require('cookie').stringifySetCookie).toBe('function');
  });
});
