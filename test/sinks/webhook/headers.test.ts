// The headers of a webhook delivery: the content type once, custom headers kept, Switchboard's own refused.
import { describe, expect, it } from 'vitest';
import { customHeaderProblem, deliveryHeaders } from '../../../src/sinks/webhook/headers.js';

describe('webhook delivery headers', () => {
  it('sends the content type once, whatever the configured headers say, and keeps the custom ones', () => {
    const headers = deliveryHeaders({ custom: { 'Content-Type': 'application/json', autorization: 'Bearer x' }, secret: undefined, eventId: 'e1', body: '{}' });
    expect(Object.keys(headers).filter((name) => name.toLowerCase() === 'content-type')).toEqual(['Content-Type']);
    expect(headers.autorization).toBe('Bearer x');
  });

  it('accepts Content-Type only as application/json, and refuses the other headers Switchboard sets', () => {
    expect(customHeaderProblem('Content-Type', 'application/json')).toBeUndefined();
    expect(customHeaderProblem('content-type', 'Application/JSON; charset=utf-8')).toBeUndefined();
    expect(customHeaderProblem('Content-Type', 'text/plain')).toMatch(/always application\/json/);
    expect(customHeaderProblem('Content-Length', '10')).toMatch(/set by Switchboard itself/);
    expect(customHeaderProblem('webhook-signature', 'v1,forged')).toMatch(/set by Switchboard itself/);
  });
});
