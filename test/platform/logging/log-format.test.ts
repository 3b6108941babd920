// LOG_FORMAT: readable lines for people, JSON lines for collectors, chosen by whether stdout is a terminal under `auto`.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chosenLogFormat } from '../../../src/platform/log-format.js';
import { loadConfig } from '../../../src/platform/config.js';
import { killService, serviceSetup, startService, waitUntilUp } from '../../support/service-process.js';
import { waitFor } from '../../support/wait.js';

describe('choosing the log format', () => {
  it('auto is pretty on a terminal and JSON elsewhere; pretty and json are as said', () => {
    expect(chosenLogFormat('auto', true)).toBe('pretty');
    expect(chosenLogFormat('auto', false)).toBe('json');
    for (const terminal of [true, false]) {
      expect(chosenLogFormat('pretty', terminal)).toBe('pretty');
      expect(chosenLogFormat('json', terminal)).toBe('json');
    }
  });

  it('LOG_FORMAT defaults to auto, takes any case, and refuses other words naming the setting', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'Pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).toThrow(/LOG_FORMAT must be auto, pretty or json \(got "text"\)/);
  });
});

/** Starts the real service with `format` at debug, makes one request with a known id, and answers its output's lines. */
async function serviceLines(format: string) {
  const dir = mkdtempSync(join(tmpdir(), 'sb-log-format-'));
  const { base, env, key } = await serviceSetup(dir, `file:${join(dir, 'db.sqlite')}`, { LOG_FORMAT: format, LOG_LEVEL: 'debug' });
  const service = startService(env);
  try {
    await waitUntilUp(base, service);
    const requestId = `log-format-${format}`;
    const answer = await fetch(`${base}/messenger/instance/fetchInstances`, { headers: { apikey: key, 'x-request-id': requestId } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-request-id')).toBe(requestId);
    // The health checks that waited for the service log access lines too: wait for this request's own last line.
    const completedLine = (line: string) => line.includes(requestId) && line.includes('request completed');
    await waitFor(() => service.output.join('').split('\n').some(completedLine), 10_000, { what: () => service.output.join('') });
    // Whole lines only: the service is killed while it may still be writing one.
    const output = service.output.join('');
    const lines = output.slice(0, output.lastIndexOf('\n')).split('\n').filter(Boolean);
    return { lines, requestId, key };
  } finally {
    await killService(service);
  }
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

describe('the service writing its logs', () => {
  it('LOG_FORMAT=json writes one JSON object per line, request lines with their id, no key', async () => {
    const { lines, requestId, key } = await serviceLines('json');
    expect(lines.filter((line) => !isJson(line))).toEqual([]);
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.find((line) => line.msg === 'switchboard listening')).toMatchObject({ level: 30, service: 'switchboard' });
    const ofRequest = parsed.filter((line) => line.reqId === requestId).map((line) => line.msg);
    expect(ofRequest).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
    expect(lines.filter((line) => line.includes(key))).toEqual([]);
  }, 120_000);

  it('LOG_FORMAT=pretty writes readable lines (even to a pipe), request lines with their id, no key', async () => {
    const { lines, requestId, key } = await serviceLines('pretty');
    expect(lines.filter(isJson)).toEqual([]);
    expect(lines.find((line) => line.includes('switchboard listening'))).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*: switchboard listening$/);
    const ofRequest = lines.filter((line) => line.includes(`(${requestId})`));
    expect(ofRequest.some((line) => line.includes('incoming request'))).toBe(true);
    expect(ofRequest.some((line) => line.includes('request completed'))).toBe(true);
    expect(lines.filter((line) => line.includes(key))).toEqual([]);
  }, 120_000);
});
