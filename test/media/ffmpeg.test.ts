// The ffmpeg runner: a bounded number of children at once, each within its time, a missing binary said plainly; and
// what voice-note conversion makes of its failures (400 naming the field, 503 without a binary).
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodedError } from '../../src/core/errors.js';
import { Ffmpeg, FfmpegFailed, FfmpegMissing, durationFromLog } from '../../src/media/ffmpeg.js';
import { prepareVoiceNote } from '../../src/media/voice-note.js';
import { sine } from '../support/media-fixtures.js';

let dir: string;

/** A stand-in binary: a shell script given the runner's arguments. */
async function script(name: string, body: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sb-ffmpeg-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Ffmpeg runner', () => {
  it('runs at most `concurrency` children at once; the others wait their turn', async () => {
    const running = join(dir, 'running');
    await writeFile(join(dir, 'seen'), '');
    // Each child marks itself running, records how many are, and leaves after a while.
    const path = await script(
      'slow',
      `mkdir -p ${running}; touch ${running}/$$; ls ${running} | wc -l >> ${dir}/seen; sleep 0.3; rm ${running}/$$; printf done`,
    );
    const ffmpeg = new Ffmpeg({ path, concurrency: 2, timeoutMs: 30_000 });
    const outputs = await Promise.all(Array.from({ length: 5 }, () => ffmpeg.run({ args: [], maxOutputBytes: 100 })));
    expect(outputs.map((o) => o.stdout.toString())).toEqual(['done', 'done', 'done', 'done', 'done']);
    const seen = (await readFile(join(dir, 'seen'), 'utf8')).trim().split('\n').map(Number);
    expect(seen).toHaveLength(5);
    expect(Math.max(...seen)).toBeLessThanOrEqual(2);
  });

  it('kills a run past its time and says so; a run writing too much is stopped too', async () => {
    const sleeper = new Ffmpeg({ path: await script('sleeper', 'sleep 5'), concurrency: 1, timeoutMs: 200 });
    const started = Date.now();
    const late = await sleeper.run({ args: [], maxOutputBytes: 10 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(FfmpegFailed);
    expect((late as FfmpegFailed).reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(4000);
    // The slot of the killed run is free again.
    const chatty = new Ffmpeg({ path: await script('chatty', 'head -c 100000 /dev/zero'), concurrency: 1, timeoutMs: 10_000 });
    const big = await chatty.run({ args: [], maxOutputBytes: 1000 }).catch((e: unknown) => e);
    expect((big as FfmpegFailed).reason).toBe('output');
  });

  it('an exit with an error keeps the last words of the log, without temporary file names', async () => {
    const failing = new Ffmpeg({
      path: await script('failing', 'echo "/tmp/switchboard-ff-0a1b2c: Invalid data found when processing input" >&2; exit 1'),
      concurrency: 1,
      timeoutMs: 10_000,
    });
    const error = (await failing.run({ args: [], maxOutputBytes: 10 }).catch((e: unknown) => e)) as FfmpegFailed;
    expect(error.reason).toBe('exit');
    expect(error.detail()).toBe('input: Invalid data found when processing input');
  });

  it('a binary that is not there is FfmpegMissing; a voice note then answers 503, not 500', async () => {
    const missing = new Ffmpeg({ path: join(dir, 'no-such-ffmpeg'), concurrency: 1, timeoutMs: 10_000 });
    await expect(missing.run({ args: [], maxOutputBytes: 10 })).rejects.toBeInstanceOf(FfmpegMissing);
    const refused = await prepareVoiceNote(missing, await sine('mp3'), { field: 'audio', convert: true, maxBytes: 1 << 20 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CodedError);
    expect((refused as CodedError).code).toBe('unavailable');
    expect((refused as CodedError).message).toMatch(/^audio cannot be converted now: ffmpeg could not be started/);
  });

  it('a conversion past MEDIA_CONVERT_TIMEOUT_MS is a 400 naming the field', async () => {
    const sleeper = new Ffmpeg({ path: await script('sleeper2', 'sleep 5'), concurrency: 1, timeoutMs: 200 });
    const refused = (await prepareVoiceNote(sleeper, await sine('mp3'), { field: 'audio', convert: true, maxBytes: 1 << 20 }).catch(
      (e: unknown) => e,
    )) as CodedError;
    expect(refused.code).toBe('invalid_input');
    expect(refused.message).toMatch(/^audio could not be converted in time/);
  });

  it('reads the duration from the log (Duration, else the last time=)', () => {
    expect(durationFromLog('  Duration: 00:01:02.50, start: 0.000000, bitrate: 64 kb/s')).toBe(62.5);
    expect(durationFromLog('Duration: N/A\nsize=1kB time=00:00:01.00\nsize=2kB time=00:00:03.20 bitrate=')).toBeCloseTo(3.2);
    expect(durationFromLog('nothing here')).toBeUndefined();
  });
});
