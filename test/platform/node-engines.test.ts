// Installs on the Node versions the README names without engine warnings: no locked package declares a Node newer than
// 20, and the two kept back by `overrides` (content-disposition under @fastify/static, cookie under light-my-request)
// still give their dependents the functions they call. A new package that needs a newer Node fails here.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, root), 'utf8');
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } }> };
const manifest = JSON.parse(read('package.json')) as { engines: { node: string }; overrides: Record<string, Record<string, string>> };

/** The lowest Node major a `>=N…` engines range allows, or undefined for other forms. */
const lowestMajor = (range: string) => {
  const match = /^>=\s*v?(\d+)/.exec(range.trim());
  return match ? Number(match[1]) : undefined;
};

describe('Node.js versions', () => {
  it('no locked package declares a Node newer than 20 (npm install prints no EBADENGINE there)', () => {
    expect(manifest.engines.node).toBe('>=20');
    const newer = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && (lowestMajor(entry.engines?.node ?? '') ?? 0) > 20)
      .map(([path, entry]) => `${path} (${entry.engines?.node})`);
    expect(newer).toEqual([]);
    expect(manifest.overrides).toEqual({ '@fastify/static': { 'content-disposition': '^2.0.1' }, 'light-my-request': { cookie: '^1.1.1' } });
  });

  it('the dependents kept on older versions find the functions they call', () => {
    const here = createRequire(new URL('package.json', root));
    // Resolved from each dependent, as it resolves them itself.
    const fromStatic = createRequire(here.resolve('@fastify/static'));
    expect(typeof fromStatic('content-disposition').create).toBe('function');
    expect(fromStatic('content-disposition').create('my report.pdf')).toBe('attachment; filename="my report.pdf"');
    const fromInjector = createRequire(here.resolve('light-my-request'));
    expect(fromInjector('cookie').stringifySetCookie({ name: 'a', value: 'b c' })).toBe('a=b%20c');
  });
});
