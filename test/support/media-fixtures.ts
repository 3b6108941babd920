// Real audio and video made with the bundled ffmpeg at test time (no binary fixtures in the repository).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ffmpeg } from '../../src/media/ffmpeg.js';

const run = promisify(execFile);
const made = new Map<string, Promise<Buffer>>();

/** The binary the service would use with no FFMPEG_PATH. */
const bundledFfmpeg = () => new Ffmpeg({ concurrency: 2, timeoutMs: 60_000 }).binaryPath();

async function make(name: string, args: string[]): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-fixture-'));
  try {
    const out = join(dir, name);
    await run(await bundledFfmpeg(), ['-hide_banner', '-v', 'error', '-nostdin', ...args, '-y', out]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A 440 Hz sine of `seconds` in the format of `ext` (mp3, wav, m4a, ogg, webm, opus, flac…), made once per run. */
export function sine(ext: string, seconds = 2): Promise<Buffer> {
  const key = `sine-${seconds}.${ext}`;
  let bytes = made.get(key);
  if (!bytes) {
    bytes = make(key, ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`]);
    made.set(key, bytes);
  }
  return bytes;
}

/** A test-pattern video of `seconds` with a sine sound track, as mp4 (H.264/AAC) or webm (VP8/Vorbis), made once per run. */
export function testVideo(ext: 'mp4' | 'webm', seconds = 2): Promise<Buffer> {
  const key = `video-${seconds}.${ext}`;
  let bytes = made.get(key);
  if (!bytes) {
    const codecs = ext === 'mp4' ? ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac'] : ['-c:v', 'libvpx', '-c:a', 'libvorbis'];
    bytes = make(key, [
      ...['-f', 'lavfi', '-i', `testsrc=duration=${seconds}:size=160x160:rate=15`],
      ...['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`],
      ...codecs,
      '-shortest',
    ]);
    made.set(key, bytes);
  }
  return bytes;
}

/** Whether bytes are an Ogg stream carrying Opus (what WhatsApp records voice notes as). */
export function isOggOpus(bytes: Buffer): boolean {
  return bytes.subarray(0, 4).toString('latin1') === 'OggS' && bytes.subarray(0, 200).includes('OpusHead');
}
