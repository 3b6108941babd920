// Runs ffmpeg as a child process, off the event loop: the configured or bundled binary, a bounded number at once, each within a time limit.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export interface FfmpegSettings {
  /** A binary to run instead of the one the `@ffmpeg-installer/ffmpeg` package carries (FFMPEG_PATH). */
  path?: string;
  /** How many runs at once; more wait their turn. */
  concurrency: number;
  /** A run still going after this long is killed. */
  timeoutMs: number;
}

export interface FfmpegRun {
  /** The arguments after the binary; outputs go to `pipe:1` (stdout) and `pipe:3`, `pipe:4`… (`extraPipes`). */
  args: string[];
  /** How many more output pipes (fd 3 and up) the arguments write to. */
  extraPipes?: number;
  /** Largest output taken from any one pipe; a run writing more is killed. */
  maxOutputBytes: number;
}

export interface FfmpegOutput {
  stdout: Buffer;
  /** What the extra pipes carried, fd 3 first. */
  pipes: Buffer[];
  /** ffmpeg's log (its last 16 KB). */
  stderr: string;
}

/** A run that failed: ffmpeg exited with an error, ran past its time, or wrote more than allowed. */
export class FfmpegFailed extends Error {
  constructor(
    readonly reason: 'exit' | 'timeout' | 'output',
    readonly stderr: string,
    message: string,
  ) {
    super(message);
  }

  /** ffmpeg's last words, without temporary file names: the line a caller can be shown. */
  detail(): string {
    const lines = this.stderr
      .split('\n')
      .map((line) => line.replace(/\S*switchboard-ff-[0-9a-f]+(\.mp4)?/g, 'input').trim())
      .filter((line) => line !== '');
    return lines[lines.length - 1] ?? this.message;
  }
}

/** No ffmpeg binary: neither FFMPEG_PATH nor the bundled package's. */
export class FfmpegMissing extends Error {}

const stderrKept = 16 * 1024;

/** The path of the binary `@ffmpeg-installer/ffmpeg` carries for this platform (it throws a string when it has none). */
async function bundledBinary(): Promise<string> {
  try {
    const installer = await import('@ffmpeg-installer/ffmpeg');
    return installer.default.path;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new FfmpegMissing(`no ffmpeg binary: the bundled one is not available here (${reason}); set FFMPEG_PATH`);
  }
}

export class Ffmpeg {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private binary: Promise<string> | undefined;

  constructor(private readonly settings: FfmpegSettings) {}

  /** The binary runs use: FFMPEG_PATH, else the bundled one. */
  binaryPath(): Promise<string> {
    this.binary ??= this.settings.path ? Promise.resolve(this.settings.path) : bundledBinary();
    return this.binary;
  }

  /** Runs ffmpeg once its turn comes; throws FfmpegFailed or FfmpegMissing. */
  async run(run: FfmpegRun): Promise<FfmpegOutput> {
    const binary = await this.binaryPath();
    await this.turn();
    try {
      return await this.spawnOnce(binary, run);
    } finally {
      this.release();
    }
  }

  private async turn(): Promise<void> {
    if (this.running < this.settings.concurrency) {
      this.running++;
      return;
    }
    // The slot is handed over by release(), so `running` stays counted.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private spawnOnce(binary: string, run: FfmpegRun): Promise<FfmpegOutput> {
    const extra = run.extraPipes ?? 0;
    return new Promise((resolve, reject) => {
      const child = spawn(binary, ['-hide_banner', '-nostdin', ...run.args], {
        stdio: ['ignore', 'pipe', 'pipe', ...Array.from({ length: extra }, () => 'pipe' as const)],
      });
      let failure: FfmpegFailed | undefined;
      let stderr = '';
      const fail = (reason: FfmpegFailed['reason'], message: string) => {
        failure ??= new FfmpegFailed(reason, stderr, message);
        child.kill('SIGKILL');
      };
      const collect = (stream: Readable) => {
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > run.maxOutputBytes) fail('output', `ffmpeg wrote more than ${run.maxOutputBytes} bytes`);
          else chunks.push(chunk);
        });
        // A pipe closed early by the kill is reported by the exit below.
        stream.on('error', () => {});
        return () => Buffer.concat(chunks);
      };
      // All pipes were asked for above (stdio 'pipe'), so none is null.
      const pipe = (fd: number) => child.stdio[fd] as Readable;
      const outputs = [1, ...Array.from({ length: extra }, (_, i) => 3 + i)].map((fd) => collect(pipe(fd)));
      pipe(2).setEncoding('utf8');
      pipe(2).on('data', (text: string) => {
        stderr = (stderr + text).slice(-stderrKept);
      });
      const timer = setTimeout(() => fail('timeout', `ffmpeg did not finish within ${this.settings.timeoutMs / 1000} seconds`), this.settings.timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(new FfmpegMissing(`ffmpeg could not be started (${binary}): ${error.message}; check FFMPEG_PATH`));
      });
      // A killed run ends at its exit: a child of its own (a wrapper script's) may hold the pipes open longer.
      child.on('exit', () => {
        if (!failure) return;
        clearTimeout(timer);
        for (const stream of child.stdio) stream?.destroy();
        reject(new FfmpegFailed(failure.reason, stderr, failure.message));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (failure) return reject(new FfmpegFailed(failure.reason, stderr, failure.message));
        if (code !== 0) return reject(new FfmpegFailed('exit', stderr, `ffmpeg exited with ${code ?? signal}`));
        const [stdout, ...pipes] = outputs.map((take) => take());
        resolve({ stdout, pipes, stderr });
      });
    });
  }
}

/** Runs `use` with `bytes` written to a private temporary file (ffmpeg seeks in its inputs: MP4 keeps its index at the end). */
export async function withTempFile<T>(bytes: Buffer, use: (path: string) => Promise<T>): Promise<T> {
  const path = join(tmpdir(), `switchboard-ff-${randomBytes(12).toString('hex')}`);
  await writeFile(path, bytes, { mode: 0o600 });
  try {
    return await use(path);
  } finally {
    await rm(path, { force: true });
  }
}

/** ffmpeg's demuxer for a sniffed type, so the bytes are read as what they were checked to be (no format guessing). */
const demuxers: Record<string, string> = {
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/vnd.wave': 'wav',
  'audio/ogg': 'ogg',
  'audio/opus': 'ogg',
  'audio/ogg; codecs=opus': 'ogg',
  'video/ogg': 'ogg',
  'audio/aac': 'aac',
  'audio/x-flac': 'flac',
  'audio/flac': 'flac',
  'audio/amr': 'amr',
  'audio/mp4': 'mov',
  'video/mp4': 'mov',
  'video/quicktime': 'mov',
  'video/3gpp': 'mov',
  'audio/webm': 'matroska',
  'video/webm': 'matroska',
  'video/matroska': 'matroska',
  'video/x-matroska': 'matroska',
  'audio/x-matroska': 'matroska',
};

/**
 * The arguments that open a local input file of a sniffed type: only the file protocol (a playlist cannot make ffmpeg
 * fetch anything), and the demuxer of that type where known.
 */
export function inputArgs(path: string, sniffedMime: string): string[] {
  const demuxer = demuxers[sniffedMime];
  return ['-protocol_whitelist', 'file', ...(demuxer ? ['-f', demuxer] : []), '-i', path];
}

/** The media's duration in seconds as ffmpeg reported it (`Duration: 00:01:02.50`, else the last `time=`), or undefined. */
export function durationFromLog(stderr: string): number | undefined {
  const toSeconds = (h: string, m: string, s: string) => Number(h) * 3600 + Number(m) * 60 + Number(s);
  const declared = /Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(stderr);
  if (declared) return toSeconds(declared[1], declared[2], declared[3]);
  const times = [...stderr.matchAll(/time=(\d+):(\d{2}):(\d{2}(?:\.\d+)?)/g)];
  const last = times[times.length - 1];
  return last ? toSeconds(last[1], last[2], last[3]) : undefined;
}
