// Loads the configuration from the environment through the declared settings; refuses it with every problem listed.
import type { Env } from './declare.js';
import { settings, type Config } from './settings/index.js';
import { readSettings } from './tree.js';

export class ConfigError extends Error {}

/** Reads and validates the configuration; throws a ConfigError listing every bad setting. */
export function loadConfig(env: Env = process.env): Config {
  const { values, problems } = readSettings(settings, env);
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n- ${problems.join('\n- ')}`);
  return values;
}
