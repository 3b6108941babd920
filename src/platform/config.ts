// The service's configuration: every setting declared once in config/settings/, loaded, typed and documented from there.
export { ConfigError, loadConfig } from './config/load.js';
export type { Config } from './config/settings/index.js';
export type { LogLevel } from './config/log-level.js';
export { settingDocs } from './config/readme-table.js';
