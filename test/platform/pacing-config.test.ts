// The PACING_* variables: off by default, read into the config, and a maximum gap below the minimum refused at start.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/platform/config.js';

describe('pacing configuration', () => {
  it('is off by default with a person-like default pace', () => {
    const config = loadConfig({});
    expect([config.pacingEnabled, config.pacingMaxPerMinute, config.pacingMinGapMs, config.pacingMaxGapMs, config.pacingNewChatDelayMs]).toEqual([
      false,
      20,
      2000,
      6000,
      10_000,
    ]);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PACING_ENABLED: 'true',
      PACING_MAX_PER_MINUTE: '12',
      PACING_MIN_GAP_MS: '0',
      PACING_MAX_GAP_MS: '0',
      PACING_NEW_CHAT_DELAY_MS: '30000',
    });
    expect([config.pacingEnabled, config.pacingMaxPerMinute, config.pacingMinGapMs, config.pacingMaxGapMs, config.pacingNewChatDelayMs]).toEqual([
      true,
      12,
      0,
      0,
      30_000,
    ]);
  });

  it('refuses values out of range and a maximum gap below the minimum, naming the variable', () => {
    expect(() => loadConfig({ PACING_MAX_PER_MINUTE: '0' })).toThrow('PACING_MAX_PER_MINUTE must be a whole number from 1 to 600 (got "0")');
    expect(() => loadConfig({ PACING_MIN_GAP_MS: '8000' })).toThrow('PACING_MAX_GAP_MS must be at least PACING_MIN_GAP_MS (8000)');
    expect(loadConfig({ PACING_MIN_GAP_MS: '8000', PACING_MAX_GAP_MS: '8000' }).pacingMaxGapMs).toBe(8000);
  });
});
