// Loading the configuration: defaults, every invalid setting reported at once, the webhook event filter, the README table.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, settingDocs } from '../../src/platform/config.js';

describe('configuration', () => {
  it('has defaults that start the service on SQLite', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.databaseUri).toBe('file:./data/switchboard.db');
    expect(config.globalApiKey).toBeUndefined();
    expect(config.webhookRetryMaxAttempts).toBe(10);
  });

  it('lists every invalid setting at once', () => {
    try {
      loadConfig({ SERVER_PORT: 'eighty', WEBHOOK_GLOBAL_ENABLED: 'maybe', DATABASE_CONNECTION_URI: 'mysql://x' });
      expect.unreachable('loadConfig accepted bad settings');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toMatch(/SERVER_PORT must be a whole number/);
      expect(message).toMatch(/WEBHOOK_GLOBAL_ENABLED must be true or false/);
      expect(message).toMatch(/DATABASE_CONNECTION_URI must start with file:/);
    }
  });

  it('reads the global webhook event filter', () => {
    const config = loadConfig({ WEBHOOK_EVENTS_MESSAGES_UPSERT: 'true', WEBHOOK_EVENTS_QRCODE_UPDATED: 'false' });
    expect(config.webhookGlobalEvents).toEqual({ MESSAGES_UPSERT: true, QRCODE_UPDATED: false });
  });

  it('is documented in the README, setting by setting', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const setting of settingDocs) expect(readme, setting.env).toContain(`\`${setting.env}\``);
  });
});
