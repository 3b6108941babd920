// Renders a link code as the QR image clients show (the sandbox's and WhatsApp Web's): a PNG data URL.
import QRCode from 'qrcode';

const fallbackColour = '#198754';
const hexColour = /^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

/** The colour to draw with: the configured one when it is a hex colour, else the default. */
export function qrColour(configured: string): string {
  return hexColour.test(configured) ? configured : fallbackColour;
}

export async function renderQr(code: string, colour: string): Promise<string> {
  return QRCode.toDataURL(code, {
    type: 'image/png',
    errorCorrectionLevel: 'H',
    margin: 3,
    scale: 4,
    color: { dark: qrColour(colour), light: '#ffffff' },
  });
}
