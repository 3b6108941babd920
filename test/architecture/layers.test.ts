// The layer rules (.dependency-cruiser.cjs) hold for src/, and they do fail on a deliberate violation.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const config = resolve(root, '.dependency-cruiser.cjs');
const cli = resolve(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

function cruise(cwd: string) {
  const run = spawnSync(process.execPath, [cli, 'src', '--config', config, '--output-type', 'err'], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('layer rules', () => {
  it('src/ has no import cycle and no import from a lower floor to a higher one', () => {
    const { status, output } = cruise(root);
    expect(output).not.toMatch(/error/);
    expect(status).toBe(0);
  });

  it('refuse a core module importing a higher floor, and an import cycle (fixture)', () => {
    const { status, output } = cruise(resolve(root, 'test/fixtures/layering-violation'));
    expect(status).not.toBe(0);
    expect(output).toMatch(/core-imports-only-lower-floors: src\/core\/instance\.ts → src\/instances\/registry\.ts/);
    expect(output).toMatch(/no-circular: src\/messages\/a\.ts →/);
  });
});
