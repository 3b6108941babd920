// The API's JSON body parser: UTF-8 only, nesting bounded, and an empty body read as no body.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { invalidInput, unsupportedMediaType } from '../../core/errors.js';

/** Deeper than any request of the interface nests (a list send: body → values → rows → row, five levels). */
const maxBodyNesting = 32;

/**
 * Replaces Fastify's JSON parser. A body declared in another charset is a 415 (it would be read as UTF-8 and its
 * text corrupted), bytes that are not UTF-8 a 400 (they would be stored as U+FFFD); a body nesting objects and arrays
 * deeper than `maxBodyNesting` a 400 (code that walks a body, such as the Idempotency-Key hash, stays bounded). An
 * empty body (clients that send `Content-Type: application/json` on every request, DELETE included) counts as no
 * body: routes without a body schema take it, routes with one answer their own 400 naming what is missing.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      return done(unsupportedMediaType(`charset ${charset} is not supported; send the body as UTF-8 (charset=utf-8)`), undefined);
    }
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    if (!isUtf8(bytes)) return done(invalidInput('body is not valid UTF-8; send JSON text encoded as UTF-8'), undefined);
    const text = bytes.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    parseJson(request, text, (error, value) => {
      if (error) return done(isPlainJson(text) ? invalidInput(prototypeKeys) : error, undefined);
      const problem = nestingProblem(value);
      return problem ? done(invalidInput(problem), undefined) : done(null, value);
    });
  });
}

const prototypeKeys = 'body must not have a "__proto__" key, nor a "constructor" key holding "prototype"';

/** Whether text is valid JSON to a plain parser: then the safe parser refused it for a prototype key. */
function isPlainJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '');
  return match?.[1];
}

/** Why the value nests too deep, or undefined; walks without recursion, so any depth is safe to check. */
function nestingProblem(value: unknown, limit = maxBodyNesting): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const stack: { node: object; depth: number }[] = [{ node: value, depth: 1 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { node, depth } = top;
    if (depth > limit) return `body nests objects and arrays more than ${limit} levels deep`;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push({ node: child as object, depth: depth + 1 });
  }
  return undefined;
}
