// Assertions on the API's answers shared by the over-HTTP tests.
import { expect } from 'vitest';

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
type Json = any;

/** A 400 in the error envelope carrying `message` (a whole message, or a pattern over all of them). */
export function expect400(res: { status: number; body: Json }, message: string | RegExp): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toMatchObject({ status: 400, error: 'Bad Request' });
  const messages: string[] = res.body.response.message;
  if (typeof message === 'string') expect(messages).toContain(message);
  else expect(messages.join(' | ')).toMatch(message);
}
