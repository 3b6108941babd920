// Media type detection from the bytes themselves, plus the weaker fallbacks documents may use.

import { fileTypeFromBuffer } from 'file-type';

export interface Sniffed {
  mime: string;
  ext: string;
}

/** Detected types renamed to the names WhatsApp clients expect. */
const WHATSAPP_NAMES: Record<string, string> = {
  'audio/x-m4a': 'audio/mp4',
  'audio/x-mp4': 'audio/mp4',
};

/** The type the bytes really are, or undefined when file-type does not recognise them. */
export async function sniff(bytes: Buffer): Promise<Sniffed | undefined> {
  const found = await fileTypeFromBuffer(bytes);
  if (!found) return undefined;
  return { mime: WHATSAPP_NAMES[found.mime] ?? found.mime, ext: found.ext };
}

/** The top-level type of a mimetype ('audio/ogg; codecs=opus' → 'audio'). */
export const topLevelType = (mime: string): string => mime.split('/')[0].toLowerCase();

/** Common document types that have no magic number file-type could see (text formats mostly). */
const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  json: 'application/json',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  svg: 'image/svg+xml',
  vcf: 'text/vcard',
  ics: 'text/calendar',
  rtf: 'application/rtf',
  pdf: 'application/pdf',
  zip: 'application/zip',
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  apk: 'application/vnd.android.package-archive',
};

export function mimetypeFromFileName(fileName: string | undefined): string | undefined {
  const ext = fileName?.match(/\.([A-Za-z0-9]+)$/)?.[1]?.toLowerCase();
  return ext ? BY_EXTENSION[ext] : undefined;
}

/** A declared type worth using as a fallback (well-formed and more specific than "binary"). */
export function usableDeclaredMimetype(declared: string | undefined): string | undefined {
  const type = declared?.split(';')[0]?.trim().toLowerCase();
  if (!type || !/^[\w.+-]+\/[\w.+-]+$/.test(type)) return undefined;
  if (type === 'application/octet-stream' || type === 'binary/octet-stream') return undefined;
  return type;
}
