// Settings of media conversion (voice notes, round videos): the ffmpeg binary, how many run at once, how long each may take.
import { optionalText, wholeNumber } from '../declare.js';

export const mediaConversion = {
  ffmpegPath: optionalText({
    env: 'FFMPEG_PATH',
    shownDefault: '(bundled)',
    meaning:
      'The ffmpeg binary that converts voice notes and measures videos. Unset: the one the `@ffmpeg-installer/ffmpeg` package carries; set it to use a system ffmpeg (e.g. `/usr/bin/ffmpeg`, needs libopus and libx264).',
  }),
  mediaConvertConcurrency: wholeNumber({
    env: 'MEDIA_CONVERT_CONCURRENCY',
    default: 2,
    min: 1,
    max: 64,
    meaning: 'How many ffmpeg conversions run at once; more wait their turn.',
  }),
  mediaConvertTimeoutMs: wholeNumber({
    env: 'MEDIA_CONVERT_TIMEOUT_MS',
    default: 120_000,
    min: 1000,
    max: 3600_000,
    meaning: 'Time limit for one conversion (ffmpeg is stopped past it and the send answers 400).',
  }),
};
