// The linking QR: a PNG data URL for clients (as Evolution draws it) and a terminal drawing for debug logs.
import QRCode from 'qrcode';
import { renderQr } from '../qr-image.js';

/** `data:image/png;base64,…`: margin 3, scale 4, error correction H, the configured dark colour on white. */
export function qrImage(code: string, colour: string): Promise<string> {
  return renderQr(code, colour);
}

/** The QR drawn with block characters, for `LOG_LEVEL=debug` terminals. */
export function qrTerminal(code: string): Promise<string> {
  return QRCode.toString(code, { type: 'terminal', small: true });
}

/** Evolution's message when the QR limit is reached (QRCODE_UPDATED data). */
export const qrLimitPayload = { message: 'QR code limit reached, please login again', statusCode: 500 } as const;
export const QR_LIMIT_REASON = 'QR code limit reached';
