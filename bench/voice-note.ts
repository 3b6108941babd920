// Voice-note benchmark: what converting a recording costs per second of audio, against ffmpeg run alone on the same file.
//
//   npm run bench:voice-note                       # 5 s, 30 s and 120 s inputs, 5 runs each
//   npx tsx bench/voice-note.ts --seconds=5,30,120 --runs=5 --format=mp3
//
// For each length an input is made once (speech-like: a 220 Hz tone with vibrato over pink noise, in --format, mp3
// by default). Then, alternating, --runs times each:
//   ours   prepareVoiceNote as a send runs it: the bytes written to a temporary file, one ffmpeg child that writes
//          OGG/Opus to a pipe and mono 4 kHz PCM to another, the length and the 64-bar waveform computed here;
//   alone  the same ffmpeg binary from the command line converting the same file to an OGG/Opus file (same encoder
//          settings), nothing measured, nothing read back: the floor of the conversion.
// Printed: median wall time per run, ms per second of audio, and ours/alone. The binary is FFMPEG_PATH or the bundled one.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { Ffmpeg } from '../src/media/ffmpeg.js';
import { prepareVoiceNote } from '../src/media/voice-note.js';

const run = promisify(execFile);

function option(name: string, fallback: string): string {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given ? given.slice(name.length + 3) : fallback;
}

const lengths = option('seconds', '5,30,120').split(',').map(Number);
const runs = Number(option('runs', '5'));
const format = option('format', 'mp3');

const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

async function main(): Promise<void> {
  const ffmpeg = new Ffmpeg({ path: process.env.FFMPEG_PATH || undefined, concurrency: 1, timeoutMs: 600_000 });
  const binary = await ffmpeg.binaryPath();
  const dir = await mkdtemp(join(tmpdir(), 'bench-voice-'));
  console.log(`ffmpeg: ${binary}`);
  console.log(`node ${process.version}, ${availableParallelism()} CPUs; ${runs} runs per side, alternating; input ${format}\n`);
  console.log('length | input KB | ours ms (ms per s) | alone ms (ms per s) | ours/alone | output KB | seconds | waveform min..max');
  try {
    for (const seconds of lengths) {
      const input = join(dir, `in-${seconds}.${format}`);
      await run(binary, [
        ...['-hide_banner', '-v', 'error', '-nostdin'],
        ...['-f', 'lavfi', '-i', `sine=frequency=220:duration=${seconds}`],
        ...['-f', 'lavfi', '-i', `anoisesrc=color=pink:amplitude=0.2:duration=${seconds}`],
        ...['-filter_complex', '[0:a]vibrato=f=5:d=0.5[v];[v][1:a]amix=inputs=2', '-y', input],
      ]);
      const bytes = await readFile(input);
      const ours: number[] = [];
      const alone: number[] = [];
      let last: Awaited<ReturnType<typeof prepareVoiceNote>> | undefined;
      for (let i = 0; i < runs; i++) {
        ours.push(
          await timed(async () => {
            last = await prepareVoiceNote(ffmpeg, bytes, { field: 'audio', convert: true, maxBytes: 256 * 1024 * 1024 });
          }),
        );
        const out = join(dir, `out-${seconds}-${i}.ogg`);
        alone.push(
          await timed(() =>
            run(binary, [
              ...['-hide_banner', '-v', 'error', '-nostdin', '-i', input],
              ...['-map_metadata', '-1', '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '64k', '-application', 'voip', '-f', 'ogg', '-y', out],
            ]),
          ),
        );
      }
      const [oursMs, aloneMs] = [median(ours), median(alone)];
      const bars = [...(last?.waveform ?? [])];
      console.log(
        [
          `${seconds} s`,
          (bytes.length / 1024).toFixed(0),
          `${oursMs.toFixed(0)} (${(oursMs / seconds).toFixed(1)})`,
          `${aloneMs.toFixed(0)} (${(aloneMs / seconds).toFixed(1)})`,
          (oursMs / aloneMs).toFixed(2),
          ((last?.bytes.length ?? 0) / 1024).toFixed(0),
          String(last?.seconds),
          `${Math.min(...bars)}..${Math.max(...bars)}`,
        ].join(' | '),
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
