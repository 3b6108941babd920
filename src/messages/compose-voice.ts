// Builds the content of voice notes (push-to-talk audio) and round video notes (PTV) from prepared media.
import type { PreparedMedia } from '../media/types.js';
import { mediaContent } from './compose.js';

/** A voice note: an `audioMessage` with `ptt`, its length in seconds and its waveform (base64, as other bytes are shown). */
export function voiceNoteContent(
  media: PreparedMedia,
  uploaded: { url: string; directPath: string },
  voice: { mimetype: string; seconds: number; waveform: Buffer },
  contextInfo: Record<string, unknown> | undefined,
) {
  const { messageType, content } = mediaContent(media, uploaded, { contextInfo });
  const { contextInfo: context, ...node } = content[messageType] as Record<string, unknown>;
  const audioMessage = {
    ...node,
    mimetype: voice.mimetype,
    seconds: voice.seconds,
    ptt: true,
    waveform: voice.waveform.toString('base64'),
    contextInfo: context,
  };
  return { messageType, content: { audioMessage } };
}

/** A round video note: the video as a `ptvMessage` (no caption), MP4, with its length in seconds. */
export function ptvContent(
  media: PreparedMedia,
  uploaded: { url: string; directPath: string },
  seconds: number,
  contextInfo: Record<string, unknown> | undefined,
) {
  const { content } = mediaContent(media, uploaded, { contextInfo });
  const { caption: _caption, gifPlayback: _gif, contextInfo: context, ...node } = content.videoMessage as Record<string, unknown>;
  return { messageType: 'ptvMessage', content: { ptvMessage: { ...node, mimetype: 'video/mp4', seconds, contextInfo: context } } };
}
