// The README's tour works as written: its shell blocks, pasted one after another into bash, link two sandbox instances,
// send, read and receive; and `npm run tour` runs the same story to the end, on a fresh service of its own and against
// a service the test started (on both stores).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startApp, storeTargets, type TestApp } from '../support/harness.js';
import { freePort } from '../support/service-process.js';

const root = resolve(import.meta.dirname, '..', '..');
const targets = await storeTargets();

/** Runs a command in its own process group and collects its output; the group is killed when it ends or times out. */
function run(command: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      output += `\n(timed out after ${timeoutMs} ms)`;
      killGroup();
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      killGroup();
      done({ code, output });
    });
  });
}

/** The fenced bash blocks of the README's tour section, in order. */
function tourBlocks(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## A five-minute tour'), readme.indexOf('## What it does'));
  return [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) => match[1]);
}

describe('the README tour, pasted block by block', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('links, sends, reads and receives with nothing to copy by hand', async () => {
    const blocks = tourBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-readme-tour-'));
    dirs.push(dataDir);
    const [port, receiverPort] = [await freePort(), await freePort()];
    // Only what must differ in a test run changes: the ports, where the log goes, and the start command (the sources
    // through tsx, as `npm start` would run them once built; building here would only add minutes).
    const script = blocks
      .map((block) =>
        block
          .replaceAll('localhost:8080', `localhost:${port}`)
          .replaceAll('localhost:9000', `localhost:${receiverPort}`)
          .replaceAll('listen(9000)', `listen(${receiverPort})`)
          .replace('npm start > switchboard.log', `node --import tsx src/main.ts > ${join(dataDir, 'switchboard.log')}`),
      )
      // A person pastes one block at a time: a short pause between them (the send's delay is 1.2 s).
      .join('\nsleep 3\n');
    expect(script).not.toMatch(/<[a-z .]+>/i); // no placeholder left to fill in by hand
    const result = await run(
      'bash',
      ['-c', `${script}\nsleep 2\nkill %1 %2`],
      { SERVER_PORT: String(port), DATA_DIR: dataDir, DATABASE_CONNECTION_URI: `file:${join(dataDir, 'switchboard.db')}` },
      120_000,
    );
    const { output } = result;
    expect(result.code, output).toBe(0);
    expect(output).toMatch(/alice: sbx_\S+ {2}bob: sbx_\S+/);
    expect(output).toContain('"instance":{"instanceName":"alice","status":"open","owner":"5511900000001@s.whatsapp.net"}');
    expect(output).toContain('"instance":{"instanceName":"bob","status":"open","owner":"5511900000002@s.whatsapp.net"}');
    const sent = /sent (\S+)/.exec(output)?.[1];
    expect(sent, output).toMatch(/^[0-9A-F]{16,}$/);
    // The receiver's lines: Bob got the text and the customer's, Alice the receipts up to READ.
    expect(output).toContain('<- bob messages.upsert Hello Bob');
    expect(output).toContain('<- bob messages.upsert hi');
    for (const status of ['SERVER_ACK', 'DELIVERY_ACK', 'READ']) expect(output).toContain(`<- alice messages.update ${status}`);
    expect(output).toMatch(/"deliveries":\[\{/);
  }, 150_000);
});

describe('npm run tour', () => {
  it('starts a fresh service of its own, runs every step and says so', async () => {
    const result = await run('npm', ['run', 'tour'], {}, 150_000);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/It answers \/health after [\d.]+ s\./);
    expect(result.output).toContain('← alice messages.update   READ for');
    expect(result.output).toContain('The tour is done: every step answered as expected.');
  }, 180_000);

  describe.each(targets)('against a service the test started, on $name', (target) => {
    let t: TestApp | undefined;
    afterAll(async () => {
      await t?.close();
    });

    it.skipIf(!target.available)(
      'runs every step, twice in a row, with instances of its own each time',
      async () => {
        t = await startApp(target);
        for (let round = 0; round < 2; round++) {
          const result = await run('npm', ['run', 'tour'], { TOUR_API_URL: t.url, TOUR_API_KEY: t.globalKey }, 90_000);
          expect(result.code, result.output).toBe(0);
          expect(result.output).toContain(`Running the tour against ${t.url}`);
          expect(result.output).toMatch(/messages\.upsert {3}"hi, is the shop open\?" from 5511988887777@s\.whatsapp\.net/);
          expect(result.output).toContain('The tour is done: every step answered as expected.');
        }
        // It cleans up after itself.
        expect((await t.api('GET', 'instance/fetchInstances')).body).toEqual([]);
      },
      200_000,
    );
  });
});
