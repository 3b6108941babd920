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

describe('docker-compose.fleet.yml', () => {
  const lines = meaningful(read('docker-compose.fleet.yml'));
  const nodes = ['switchboard-1', 'switchboard-2', 'switchboard-3'];
  const environmentOf = (node: string) => mapping(section(lines, ['services', node, 'environment']) ?? []);

  it('is indented with spaces, two at a time, every key a "key:" or a list item', () => {
    for (const line of lines) {
      expect(line, line).not.toMatch(/\t/);
      expect(indent(line) % 2, line).toBe(0);
      expect(line.trim(), line).toMatch(/^(- |[A-Za-z_][A-Za-z0-9_-]*:( |$))/);
    }
  });

  it('runs three nodes of one image on one PostgreSQL, each with only declared settings, its own NODE_ID, NODE_ADDRESS and volume', () => {
    const postgres = mapping(section(lines, ['services', 'postgres', 'environment']) ?? []);
    const uri = `postgresql://${postgres.POSTGRES_USER}:${postgres.POSTGRES_PASSWORD}@postgres:5432/${postgres.POSTGRES_DB}`;
    for (const node of nodes) {
      const environment = environmentOf(node);
      expect(Object.keys(environment).filter((variable) => !declared.has(variable))).toEqual([]);
      expect(environment.DATABASE_CONNECTION_URI).toBe(uri);
      expect(environment.NODE_ID).toBe(node);
      expect(environment.NODE_ADDRESS).toBe(`http://${node}:${environment.SERVER_PORT}`);
      expect(environment.DATA_DIR).toBe('/app/data');
      expect(section(lines, ['services', node, 'volumes'])).toEqual([`      - ${node}-data:/app/data`]);
      expect(section(lines, ['services', node, 'depends_on', 'postgres'])).toEqual(['        condition: service_healthy']);
      expect(section(lines, ['services', node])).toContain('    build: .');
      expect((section(lines, ['services', node, 'healthcheck']) ?? []).join('\n')).toContain('/health');
    }
    expect(section(lines, ['volumes'])).toEqual(['  postgres-data:', ...nodes.map((node) => `  ${node}-data:`)]);
  });

  it('gives every node the same global key, secrets key and public URL, required from .env', () => {
    const shared = ['AUTHENTICATION_API_KEY', 'SECRETS_KEY', 'SERVER_URL', 'DATABASE_CONNECTION_URI', 'SERVER_PORT'];
    const first = environmentOf(nodes[0]);
    for (const node of nodes) for (const name of shared) expect(environmentOf(node)[name], `${node} ${name}`).toBe(first[name]);
    expect(first.AUTHENTICATION_API_KEY).toMatch(/^\$\{AUTHENTICATION_API_KEY:\?/);
    expect(first.SECRETS_KEY).toMatch(/^\$\{SECRETS_KEY:\?/);
  });

  it('puts nginx in front, with every node in its upstreams and websocket upgrades passed on', () => {
    const balancer = section(lines, ['services', 'loadbalancer']) ?? [];
    expect(balancer.join('\n')).toMatch(/image: nginx:/);
    const mount = /- \.\/(deploy\/[^:]+):\/etc\/nginx\/conf\.d\/default\.conf:ro/.exec(balancer.join('\n'));
    expect(mount, 'the nginx configuration mounted from deploy/').not.toBeNull();
    const conf = read(mount?.[1] ?? '');
    const upstreams = [...conf.matchAll(/upstream (\w+) \{([^}]*)\}/g)];
    expect(upstreams.map((match) => match[1]).sort()).toEqual(['switchboard_api', 'switchboard_socketio']);
    for (const [, , body] of upstreams) {
      expect([...body.matchAll(/server ([\w-]+):8080/g)].map((match) => match[1])).toEqual(nodes);
    }
    expect(conf).toMatch(/location \/socket\.io\/ \{[^}]*proxy_set_header Upgrade \$http_upgrade;/);
    expect(conf).toMatch(/listen 8080;/);
    expect(section(lines, ['services', 'loadbalancer', 'ports'])).toEqual(['      - "8080:8080"']);
  });
});
