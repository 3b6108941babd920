// The compose files and the Dockerfile: well-formed indentation, the variables they give Switchboard are declared
// settings, the data volume is the image's data folder, and the PostgreSQL variant points at its own database.
// (No YAML parser is a dependency: the files use plain block mappings, read here by indentation.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { settings } from '../../src/platform/config/settings/index.js';
import { settingsOf } from '../../src/platform/config/tree.js';

const root = new URL('../../', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, root), 'utf8');
const declared = new Set(settingsOf(settings).map((setting) => setting.env));

/** The lines of a file without comments and blank lines. */
function meaningful(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
}

const indent = (line: string) => line.length - line.trimStart().length;

/** The lines nested under the key path (`services`, `switchboard`, `environment`), or undefined when a key is absent. */
function section(lines: string[], path: string[]): string[] | undefined {
  let scope = lines;
  for (const key of path) {
    const level = scope.length > 0 ? Math.min(...scope.map(indent)) : 0;
    const at = scope.findIndex((line) => indent(line) === level && line.trim() === `${key}:`);
    if (at < 0) return undefined;
    const end = scope.findIndex((line, i) => i > at && indent(line) <= level);
    scope = scope.slice(at + 1, end < 0 ? undefined : end);
  }
  return scope;
}

/** A block mapping of scalars (`KEY: value`) as an object. */
function mapping(lines: string[]): Record<string, string> {
  return Object.fromEntries(
    lines.map((line) => {
      const match = /^\s*([A-Za-z_][A-Za-z0-9_]*): (.+)$/.exec(line);
      if (!match) throw new Error(`not a "KEY: value" line: ${line}`);
      return [match[1], match[2].replace(/^"(.*)"$/, '$1')];
    }),
  );
}

describe.each(['docker-compose.yml', 'docker-compose.postgres.yml'])('%s', (name) => {
  const lines = meaningful(read(name));

  it('is indented with spaces, two at a time, every key a "key:" or a list item', () => {
    for (const line of lines) {
      expect(line, line).not.toMatch(/\t/);
      expect(indent(line) % 2, line).toBe(0);
      expect(line.trim(), line).toMatch(/^(- |[A-Za-z_][A-Za-z0-9_-]*:( |$))/);
    }
  });

  it('gives Switchboard only declared settings', () => {
    const environment = section(lines, ['services', 'switchboard', 'environment']);
    expect(environment, 'services.switchboard.environment').toBeDefined();
    const names = Object.keys(mapping(environment ?? []));
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((variable) => !declared.has(variable))).toEqual([]);
  });
});

describe('docker-compose.yml', () => {
  const lines = meaningful(read('docker-compose.yml'));

  it('builds the image and keeps its data folder on a named volume', () => {
    const service = section(lines, ['services', 'switchboard']) ?? [];
    expect(service).toContain('    build: .');
    const environment = mapping(section(lines, ['services', 'switchboard', 'environment']) ?? []);
    expect(environment.DATA_DIR).toBe('/app/data');
    expect(environment.DATABASE_CONNECTION_URI).toBe('file:/app/data/switchboard.db');
    expect(section(lines, ['services', 'switchboard', 'volumes'])).toEqual(['      - switchboard-data:/app/data']);
    expect(section(lines, ['volumes'])).toEqual(['  switchboard-data:']);
    expect(read('Dockerfile')).toContain('VOLUME ["/app/data"]');
  });
});

describe('docker-compose.postgres.yml', () => {
  const lines = meaningful(read('docker-compose.postgres.yml'));

  it("points DATABASE_CONNECTION_URI at its PostgreSQL service's user and database, started once healthy", () => {
    const postgres = mapping(section(lines, ['services', 'postgres', 'environment']) ?? []);
    const uri = mapping(section(lines, ['services', 'switchboard', 'environment']) ?? []).DATABASE_CONNECTION_URI;
    expect(uri).toBe(`postgresql://${postgres.POSTGRES_USER}:${postgres.POSTGRES_PASSWORD}@postgres:5432/${postgres.POSTGRES_DB}`);
    const check = section(lines, ['services', 'postgres', 'healthcheck']) ?? [];
    expect(check.join('\n')).toContain(`pg_isready -U ${postgres.POSTGRES_USER} -d ${postgres.POSTGRES_DB}`);
    expect(section(lines, ['services', 'switchboard', 'depends_on', 'postgres'])).toEqual(['        condition: service_healthy']);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  it('sets only declared settings, installs the lock file with npm ci as the README says, and runs the build', () => {
    const env = /^ENV (.+)$/m.exec(dockerfile)?.[1] ?? '';
    const names = [...env.matchAll(/([A-Z][A-Z0-9_]*)=/g)].map((match) => match[1]).filter((variable) => variable !== 'NODE_ENV');
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((variable) => !declared.has(variable))).toEqual([]);
    expect(dockerfile).toMatch(/^RUN npm ci\b/m);
    expect(dockerfile).not.toMatch(/npm install/);
    expect(read('README.md')).toContain('npm ci && npm run build');
  });
});
