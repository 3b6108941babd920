// Audio as MP4/AAC (getBase64FromMediaMessage's convertToMp4): what browsers and players without Opus can play.
import { invalidInput, tooLarge, unavailable } from '../core/errors.js';
import { type Ffmpeg, FfmpegFailed, FfmpegMissing, inputArgs, withTempFile } from './ffmpeg.js';
import { sniff } from './sniff.js';

export const mp4AudioMimetype = 'audio/mp4';

/** The sound track of `input` as fragmented MP4 with AAC (128 kb/s, 44.1 kHz); a 400 naming `field` when it cannot be read. */
export async function audioToMp4(ffmpeg: Ffmpeg, input: Buffer, options: { field: string; maxBytes: number }): Promise<Buffer> {
  const { field } = options;
  const detected = (await sniff(input))?.mime ?? 'application/octet-stream';
  // Fragmented: the MP4 is written as it goes (a pipe cannot seek back to put the index first).
  const mp4 = ['-map', '0:a:0', '-vn', '-c:a', 'aac', '-b:a', '128k', '-ar', '44100', '-movflags', 'frag_keyframe+empty_moov+default_base_moof', '-f', 'mp4'];
  const output = await withTempFile(input, (path) =>
    ffmpeg.run({ args: ['-v', 'error', ...inputArgs(path, detected), ...mp4, 'pipe:1'], maxOutputBytes: options.maxBytes }).catch((error: unknown) => {
      if (error instanceof FfmpegMissing) throw unavailable(`${field} cannot be converted now: ${error.message}`);
      if (!(error instanceof FfmpegFailed)) throw error;
      if (error.reason === 'output') throw tooLarge(`the audio converted to MP4 is larger than the media size limit; ask without ${field}`);
      throw invalidInput(`${field}: the audio could not be converted to MP4 (${error.detail()}); ask without ${field} to get it as it was sent`);
    }),
  );
  return output.stdout;
}
