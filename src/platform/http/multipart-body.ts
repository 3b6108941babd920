// multipart/form-data for routes that take an upload: the part `file` read under the media limit, text parts coerced to the route's body schema.
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CodedError, invalidInput, tooLarge } from '../../core/errors.js';

/** The name of the one part that carries the file (as Evolution and its clients send it). */
const filePart = 'file';
const maxFields = 32;

export interface MultipartLimits {
  /** Largest file taken (the media size limit). */
  maxBytes: number;
  /** The same limit as people read it ("64 MB"), for the 413 message. */
  limitText: string;
}

/** Registers the multipart parser in `app`'s scope only (the upload route registered there); the file is capped at `maxBytes`. */
export async function registerMultipart(app: FastifyInstance, limits: MultipartLimits): Promise<void> {
  await app.register(multipart, {
    throwFileSizeLimit: true,
    limits: { fileSize: limits.maxBytes, files: 1, fields: maxFields, parts: maxFields + 1, fieldSize: textBudget(limits.maxBytes), headerPairs: 64 },
  });
}

/** All text parts together may be as large as a JSON body carrying the media as base64. */
const textBudget = (maxBytes: number) => Math.ceil((maxBytes * 4) / 3) + 1024 * 1024;

export interface UploadRoute {
  /** The body field the file fills, as base64 (`media`, `audio`, `video`, `sticker`). */
  field: string;
  /** The route's body schema: text parts are coerced to the types it declares. */
  schema: unknown;
  limits: MultipartLimits;
}

/** True when the request came as multipart/form-data (in a scope where `registerMultipart` ran). */
export function isMultipart(request: FastifyRequest): boolean {
  return request.isMultipart();
}

/**
 * The body of a multipart request to an upload route: the text parts as the fields the schema declares (numbers,
 * booleans, arrays and objects from their text), and the part `file` as base64 in `route.field` (with its file name
 * and type where the schema has `fileName`/`mimetype` and the request gave none). Any other file part is a 400.
 */
export async function multipartBody(request: FastifyRequest, route: UploadRoute): Promise<Record<string, unknown>> {
  const properties = propertiesOf(route.schema);
  const texts = new Map<string, unknown[]>();
  let file: { bytes: Buffer; fileName?: string; mimetype?: string } | undefined;
  let textBytes = 0;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== filePart) {
          part.file.resume();
          throw invalidInput(`${filePart}: the upload must be sent in the multipart part named "${filePart}" (got a file in part "${part.fieldname}")`);
        }
        const bytes = await part.toBuffer();
        if (bytes.length === 0) throw invalidInput(`${filePart} is empty`);
        file = { bytes, fileName: part.filename || undefined, mimetype: part.mimetype || undefined };
        continue;
      }
      if (part.valueTruncated) throw tooLarge(`${part.fieldname} is larger than the ${route.limits.limitText} limit`);
      textBytes += typeof part.value === 'string' ? part.value.length : JSON.stringify(part.value).length;
      if (textBytes > textBudget(route.limits.maxBytes)) throw tooLarge(`the form's text fields are larger than the ${route.limits.limitText} limit`);
      const values = texts.get(part.fieldname) ?? [];
      values.push(part.value);
      texts.set(part.fieldname, values);
    }
  } catch (error) {
    throw asCodedError(error, route.limits);
  }
  const body: Record<string, unknown> = {};
  for (const [name, values] of texts) body[name] = coerce(name, values, properties[name]);
  if (file) {
    body[route.field] = file.bytes.toString('base64');
    if ('fileName' in properties && body.fileName === undefined && file.fileName) body.fileName = file.fileName;
    if ('mimetype' in properties && body.mimetype === undefined && file.mimetype && file.mimetype !== 'application/octet-stream') body.mimetype = file.mimetype;
  }
  return body;
}

type JsonSchema = { type?: string; items?: JsonSchema; properties?: Record<string, JsonSchema> };

function propertiesOf(schema: unknown): Record<string, JsonSchema> {
  return (schema as JsonSchema).properties ?? {};
}

/** A text part's value as the type its field declares; a value that is not of that type is a 400 naming the field. */
function coerce(name: string, values: unknown[], schema: JsonSchema | undefined): unknown {
  if (schema?.type === 'array') {
    // Repeated parts (mentioned=…&mentioned=…), or one part holding a JSON array.
    if (values.length === 1 && typeof values[0] === 'string' && values[0].trim().startsWith('[')) return parseJson(name, values[0], 'an array');
    return values.map((value, i) => coerceOne(`${name}[${i}]`, value, schema.items));
  }
  if (values.length > 1) throw invalidInput(`${name} was given more than once`);
  return coerceOne(name, values[0], schema);
}

function coerceOne(name: string, value: unknown, schema: JsonSchema | undefined): unknown {
  // A part sent as application/json arrives parsed already.
  if (typeof value !== 'string') return value;
  switch (schema?.type) {
    case 'integer':
      if (!/^-?\d+$/.test(value.trim())) throw invalidInput(`${name} must be a whole number (got "${value}")`);
      return Number(value.trim());
    case 'number': {
      const number = value.trim() === '' ? Number.NaN : Number(value);
      if (!Number.isFinite(number)) throw invalidInput(`${name} must be a number (got "${value}")`);
      return number;
    }
    case 'boolean': {
      const text = value.trim().toLowerCase();
      if (text !== 'true' && text !== 'false') throw invalidInput(`${name} must be true or false (got "${value}")`);
      return text === 'true';
    }
    case 'object':
      return parseJson(name, value, 'an object');
    default:
      return value;
  }
}

function parseJson(name: string, text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalidInput(`${name} must be ${what} written as JSON in a multipart form`);
  }
}

/** The multipart parser's own errors, in the words of the API. */
function asCodedError(error: unknown, limits: MultipartLimits): unknown {
  if (error instanceof CodedError) return error;
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge(`${filePart} is larger than the ${limits.limitText} limit`);
    case 'FST_FILES_LIMIT':
      return invalidInput(`${filePart}: send one file, in the part named "${filePart}"`);
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return invalidInput(`the form has too many parts (at most ${maxFields} text fields and one file)`);
    case 'FST_PROTO_VIOLATION':
      return invalidInput('a form field must not be named like an object property (__proto__, constructor…)');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return invalidInput('a form field declared as application/json is not valid JSON');
    case 'FST_MP_PREMATURE_CLOSE':
      return invalidInput('the form ended before all of its parts arrived');
  }
  if (error instanceof Error && /multipart|boundary|Unexpected end/i.test(error.message))
    return invalidInput(`the multipart form could not be read: ${error.message}`);
  return error;
}
