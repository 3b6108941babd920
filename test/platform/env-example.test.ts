// `.env.example`: what the settings' declarations render (run `npm run docs:config` after changing one), every
// variable with its default, and the file uncommented as a whole starts the service exactly as no file does.
import { readFileSync } from 'node:fs';
import { parse } from 'dotenv';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/platform/config.js';
import { envExample } from '../../src/platform/config/env-example.js';
import { settings } from '../../src/platform/config/settings/index.js';
import { settingsOf } from '../../src/platform/config/tree.js';

const file = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');

describe('.env.example', () => {
  it('is exactly what the declarations render (run `npm run docs:config` after changing a setting)', () => {
    expect(file).toBe(envExample());
  });

  it('names every declared variable once, with its default, under a one-line comment', () => {
    const lines = file.split('\n');
    for (const setting of settingsOf(settings)) {
      const at = lines.indexOf(`# ${setting.env}=${setting.defaultText ?? ''}`);
      expect(at, setting.env).toBeGreaterThan(0);
      expect(
        lines.filter((line) => line.startsWith(`# ${setting.env}=`)),
        setting.env,
      ).toHaveLength(1);
      expect(lines[at - 1], setting.env).toMatch(/^# \S/);
      expect(lines[at - 2], setting.env).toBe('');
    }
  });

  it('uncommented as a whole, configures exactly the defaults', () => {
    const uncommented = file
      .split('\n')
      .map((line) => line.replace(/^# ([A-Z][A-Z0-9_]*=)/, '$1'))
      .join('\n');
    const env = parse(uncommented);
    // Families such as WEBHOOK_EVENTS_<NAME> are a pattern, not a variable: they stay comments.
    const variables = settingsOf(settings).filter((setting) => /^[A-Z][A-Z0-9_]*$/.test(setting.env));
    expect(Object.keys(env).sort()).toEqual(variables.map((setting) => setting.env).sort());
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });
});
