// Round video notes (PTV): an MP4 video measured as it is, any other video converted to MP4 (H.264/AAC) first.
import { readFile, rm } from 'node:fs/promises';
import { invalidInput, tooLarge, unavailable } from '../core/errors.js';
import { type Ffmpeg, FfmpegFailed, FfmpegMissing, durationFromLog, inputArgs, withTempFile } from './ffmpeg.js';
import { sniff, topLevelType } from './sniff.js';

export interface RoundVideo {
  /** MP4 bytes. */
  bytes: Buffer;
  /** Whole seconds, at least 1. */
  seconds: number;
}

export interface RoundVideoOptions {
  /** The request field named in errors (`video`). */
  field: string;
  /** Largest converted file taken (the media size limit). */
  maxBytes: number;
}

/** The video as a round video note: a 400 naming the field when it is not a video with a picture. */
export async function prepareRoundVideo(ffmpeg: Ffmpeg, input: Buffer, options: RoundVideoOptions): Promise<RoundVideo> {
  const { field } = options;
  if (input.length === 0) throw invalidInput(`${field} is empty`);
  const detected = (await sniff(input))?.mime;
  if (!detected || topLevelType(detected) !== 'video') {
    throw invalidInput(`${field} is not a video (${detected ? `detected ${detected}` : 'its type could not be recognised'})`);
  }
  const fail = (error: unknown) => {
    throw roundVideoError(error, field, detected);
  };
  return withTempFile(input, async (path) => {
    if (detected === 'video/mp4') {
      // Read through without decoding: the picture track must exist, and the log says how long it is.
      const { stderr } = await ffmpeg
        .run({ args: [...inputArgs(path, detected), '-map', '0:v:0', '-c', 'copy', '-f', 'null', '-'], maxOutputBytes: 0 })
        .catch(fail);
      return { bytes: input, seconds: secondsOf(stderr, field) };
    }
    const out = `${path}.mp4`;
    try {
      const converted = await ffmpeg
        .run({
          args: [
            ...inputArgs(path, detected),
            ...['-map', '0:v:0', '-map', '0:a:0?', '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p'],
            ...[
              '-vf',
              'scale=trunc(iw/2)*2:trunc(ih/2)*2',
              '-c:a',
              'aac',
              '-movflags',
              '+faststart',
              '-fs',
              String(options.maxBytes + 1),
              '-f',
              'mp4',
              '-y',
              out,
            ],
          ],
          maxOutputBytes: 0,
        })
        .catch(fail);
      const bytes = await readFile(out);
      if (bytes.length > options.maxBytes) throw tooLarge(`${field} converted to MP4 is larger than the media size limit`);
      return { bytes, seconds: secondsOf(converted.stderr, field) };
    } finally {
      await rm(out, { force: true });
    }
  });
}

function secondsOf(log: string, field: string): number {
  const duration = durationFromLog(log);
  if (duration === undefined) throw invalidInput(`${field} has no readable duration`);
  return Math.max(1, Math.round(duration));
}

function roundVideoError(error: unknown, field: string, detected: string): unknown {
  if (error instanceof FfmpegMissing) return unavailable(`${field} cannot be read now: ${error.message}`);
  if (!(error instanceof FfmpegFailed)) return error;
  if (error.reason === 'timeout') return invalidInput(`${field} could not be converted in time (${error.message}); send a shorter video`);
  if (/matches no streams/.test(error.stderr)) return invalidInput(`${field} has no picture track (detected ${detected})`);
  return invalidInput(`${field} could not be read as a video (detected ${detected}): ${error.detail()}`);
}
