// Voice notes: common audio becomes OGG/Opus mono 48 kHz (one ffmpeg run), with its length and the 64-bar waveform WhatsApp draws.
import { invalidInput, tooLarge, unavailable } from '../core/errors.js';
import { type Ffmpeg, FfmpegFailed, FfmpegMissing, inputArgs, withTempFile } from './ffmpeg.js';
import { sniff, topLevelType } from './sniff.js';

export interface VoiceNote {
  /** What is sent: OGG/Opus when converted, else the bytes as given. */
  bytes: Buffer;
  mimetype: string;
  /** Whole seconds, at least 1. */
  seconds: number;
  /** WhatsApp's waveform: 64 bars from 0 to 100. */
  waveform: Buffer;
}

export interface VoiceNoteOptions {
  /** The request field named in errors (`audio`). */
  field: string;
  /** false: the bytes leave as given (only measured). */
  convert: boolean;
  /** Largest converted file taken (the media size limit). */
  maxBytes: number;
}

/** WhatsApp's voice-note format. */
const voiceNoteMimetype = 'audio/ogg; codecs=opus';
const waveformBars = 64;
/** Sample rate of the mono PCM the length and waveform are read from: enough for 64 bars, small for long notes. */
const analysisRate = 4000;

/** The audio as a voice note: converted (or kept, `convert: false`) and measured; a 400 naming the field when it is not audio. */
export async function prepareVoiceNote(ffmpeg: Ffmpeg, input: Buffer, options: VoiceNoteOptions): Promise<VoiceNote> {
  const { field } = options;
  if (input.length === 0) throw invalidInput(`${field} is empty`);
  const detected = (await sniff(input))?.mime;
  // Audio, or a container that may carry a sound track (WebM and MP4 sniff as video).
  if (!detected || (topLevelType(detected) !== 'audio' && topLevelType(detected) !== 'video')) {
    throw invalidInput(`${field} is not an audio file (${detected ? `detected ${detected}` : 'its type could not be recognised'})`);
  }
  if (!options.convert && topLevelType(detected) !== 'audio') {
    throw invalidInput(`${field} is not an audio file (detected ${detected}); send it with encoding true to take its sound track`);
  }
  const analysis = ['-map', '0:a:0', '-ac', '1', '-ar', String(analysisRate), '-f', 's16le', '-c:a', 'pcm_s16le'];
  const opus = ['-map', '0:a:0', '-map_metadata', '-1', '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '64k', '-application', 'voip', '-f', 'ogg'];
  const output = await withTempFile(input, (path) =>
    ffmpeg
      .run({
        args: ['-v', 'error', ...inputArgs(path, detected), ...(options.convert ? [...opus, 'pipe:1', ...analysis, 'pipe:3'] : [...analysis, 'pipe:1'])],
        extraPipes: options.convert ? 1 : 0,
        maxOutputBytes: Math.max(options.maxBytes, 2 * analysisRate * 3600),
      })
      .catch((error: unknown) => {
        throw conversionError(error, field, detected);
      }),
  );
  const [converted, pcm] = options.convert ? [output.stdout, output.pipes[0]] : [input, output.stdout];
  if (converted.length > options.maxBytes) throw tooLarge(`${field} converted to a voice note is larger than the media size limit`);
  const samples = pcmSamples(pcm);
  if (samples.length === 0) throw invalidInput(`${field} has no sound (its sound track is empty)`);
  return {
    bytes: converted,
    mimetype: options.convert ? voiceNoteMimetype : keptMimetype(detected),
    seconds: Math.max(1, Math.round(samples.length / analysisRate)),
    waveform: waveformOf(samples),
  };
}

/** The type a file sent unconverted is declared as: its own, audio named as audio. */
function keptMimetype(detected: string): string {
  if (/^audio\/(ogg|opus)/.test(detected)) return voiceNoteMimetype;
  return detected.replace(/^video\//, 'audio/');
}

function conversionError(error: unknown, field: string, detected: string): unknown {
  if (error instanceof FfmpegMissing) return unavailable(`${field} cannot be converted now: ${error.message}`);
  if (!(error instanceof FfmpegFailed)) return error;
  if (error.reason === 'timeout') return invalidInput(`${field} could not be converted in time (${error.message}); send a shorter recording`);
  if (error.reason === 'output') return tooLarge(`${field} converted to a voice note is larger than the media size limit`);
  if (/matches no streams/.test(error.stderr)) return invalidInput(`${field} has no sound track (detected ${detected})`);
  return invalidInput(`${field} could not be read as audio (detected ${detected}): ${error.detail()}`);
}

function pcmSamples(pcm: Buffer): Int16Array {
  const whole = pcm.length - (pcm.length % 2);
  const samples = new Int16Array(whole / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2);
  return samples;
}

/**
 * 64 bars as WhatsApp clients (and Baileys) draw them: the mean loudness of each 64th of the note, scaled so the
 * loudest bar is 100. Silence is all zeros.
 */
function waveformOf(samples: Int16Array): Buffer {
  const bars = new Float64Array(waveformBars);
  for (let bar = 0; bar < waveformBars; bar++) {
    const start = Math.floor((bar * samples.length) / waveformBars);
    const end = Math.max(start + 1, Math.floor(((bar + 1) * samples.length) / waveformBars));
    let sum = 0;
    for (let i = start; i < end && i < samples.length; i++) sum += Math.abs(samples[i]);
    bars[bar] = sum / (end - start);
  }
  const loudest = Math.max(...bars);
  return Buffer.from(Array.from(bars, (value) => (loudest > 0 ? Math.round((100 * value) / loudest) : 0)));
}
