// Test runner settings: one fork per file, generous timeouts for real stores and servers.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The manager page the browser tests open is built once here when missing or stale.
    globalSetup: ['./test/support/manager-build.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
