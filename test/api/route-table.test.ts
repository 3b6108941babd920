// docs/compatibility.md's table of every Evolution route is true: each route it calls served is served, each one it
// calls not yet is not, and every route of the API document (but our own additions) is in the table.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, storeTargets, type TestApp } from '../support/harness.js';

interface Row {
  method: string;
  path: string;
  state: string;
}

/** The rows of the "Every route" table that name one route (method and path). */
function documentedRoutes(): Row[] {
  const doc = readFileSync(new URL('../../docs/compatibility.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Every route'));
  const rows: Row[] = [];
  for (const match of section.matchAll(/^\| (GET|POST|PUT|DELETE) \| `([^`]+)` \| (served|served, differs|not yet) \|/gm)) {
    rows.push({ method: match[1], path: match[2], state: match[3] });
  }
  return rows;
}

/** Where the service serves an upstream path: the root routes at the root, the API under /messenger. */
const rootPaths = new Set(['/metrics', '/manager', '/verify-creds']);
const servedAt = (path: string) => (rootPaths.has(path) ? path : `/messenger${path}`).replace('{instance}', ':instance');

/** Our own routes beside Evolution's (docs/sandbox.md, docs/events.md, docs/manager.md, the API document; the welcome and the health check). */
const ownRoutes = [
  /^\/messenger\/cluster$/,
  /^\/messenger\/sandbox\//,
  /^\/messenger\/webhook\/(deliveries|redeliver)\//,
  /^\/messenger\/docs/,
  /^\/messenger\/instance\/activity$/,
  /^\/$/,
  /^\/health$/,
];

describe('the table of every route in docs/compatibility.md', () => {
  const rows = documentedRoutes();
  let t: TestApp;
  beforeAll(async () => {
    const [sqlite] = await storeTargets();
    t = await startApp(sqlite, { METRICS_ENABLED: 'true' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists the routes of every part of the API once', () => {
    expect(rows.length).toBeGreaterThan(90);
    const keys = rows.map((row) => `${row.method} ${row.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('calls served exactly the routes the service has', () => {
    const wrong = rows.filter((row) => t.app.hasRoute({ method: row.method as 'GET', url: servedAt(row.path) }) === (row.state === 'not yet'));
    expect(wrong.map((row) => `${row.method} ${row.path} is "${row.state}"`)).toEqual([]);
  });

  it('has every route of the API document that is not our own', async () => {
    const documented = new Set(rows.map((row) => `${row.method} ${servedAt(row.path)}`));
    const openApi = await t.api('GET', 'docs/json');
    const served: string[] = [];
    for (const [path, operations] of Object.entries(openApi.body.paths as Record<string, Record<string, unknown>>)) {
      const url = path.replace('{instance}', ':instance');
      if (ownRoutes.some((own) => own.test(url))) continue;
      for (const method of Object.keys(operations)) served.push(`${method.toUpperCase()} ${url}`);
    }
    expect(served.length).toBeGreaterThan(30);
    expect(served.filter((route) => !documented.has(route))).toEqual([]);
  });
});
