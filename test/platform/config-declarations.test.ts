// The settings' declarations: the README table is what they render, and every default passes its own validation.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/platform/config.js';
import { wholeNumber, type Setting } from '../../src/platform/config/declare.js';
import { withConfigTable } from '../../src/platform/config/readme-table.js';
import { settings } from '../../src/platform/config/settings/index.js';
import { readSettings, settingsOf } from '../../src/platform/config/tree.js';

/** What reading one setting alone from `env` gives: its value and its problems. */
function readAlone(setting: Setting<unknown>, env: Record<string, string>): { value: unknown; problems: string[] } {
  const { values, problems } = readSettings({ setting }, env);
  return { value: values.setting, problems };
}

/** The settings whose default is a fixed, non-empty text (an empty text means "unset" anyway). */
const withFixedDefaults = settingsOf(settings).filter((setting) => setting.defaultText);

describe('configuration declarations', () => {
  it('render exactly the README table (run `npm run docs:config` after changing a setting)', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(withConfigTable(readme)).toBe(readme);
  });

  it.each(withFixedDefaults.map((setting) => [setting.env, setting] as const))('%s: its default, given as text, passes its own validation', (env, setting) => {
    const given = readAlone(setting, { [env]: setting.defaultText as string });
    expect(given.problems).toEqual([]);
    expect(given.value).toEqual(readAlone(setting, {}).value);
  });

  it('works out computed defaults at load time', () => {
    const config = loadConfig({ SERVER_PORT: '9000' });
    expect(config.serverUrl).toBe('http://localhost:9000');
    expect(config.nodeId).toMatch(new RegExp(`-${process.pid}$`));
  });

  it('would catch a default outside its own range', () => {
    const drifted = wholeNumber({ env: 'SOME_LIMIT', default: 5, min: 10, max: 20, meaning: 'A limit whose default drifted.' });
    expect(readAlone(drifted, { SOME_LIMIT: drifted.defaultText as string }).problems).toEqual(['SOME_LIMIT must be a whole number from 10 to 20 (got "5")']);
  });

  it('reads an alias when the setting itself is unset, and names both in its problems', () => {
    expect(loadConfig({ NATS_URI: 'nats://a:4222' }).natsUrl).toBe('nats://a:4222');
    expect(loadConfig({ NATS_URL: 'nats://b:4222', NATS_URI: 'nats://a:4222' }).natsUrl).toBe('nats://b:4222');
    expect(() => loadConfig({ NATS_ENABLED: 'true' })).toThrow('NATS_URL (or NATS_URI) is required when NATS_ENABLED=true');
  });
});
