// Test runner settings: one fork per file, generous timeouts for real stores and servers.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The manager page the browser tests open is built once here when missing or stale; a certificate authority for
    // the tests' TLS servers is made and trusted by every test process.
    globalSetup: ['./test/support/manager-build.ts', './test/support/test-ca.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
