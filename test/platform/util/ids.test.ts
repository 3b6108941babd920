// Identifiers the service makes: UUIDv7 record ids and WhatsApp-style message ids, both ordered by creation.
import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../../src/platform/util/time-ordered-id.js';
import { newMessageId, sourceOfId } from '../../../src/messages/ids.js';

describe('timeOrderedId', () => {
  it('is a version 7 UUID carrying the current Unix milliseconds', () => {
    const before = Date.now();
    const id = timeOrderedId();
    const after = Date.now();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    // A burst of ids in one millisecond may borrow the next one to stay ordered.
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after + 2);
  });

  it('sorts in creation order and never repeats, even many to a millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => timeOrderedId());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('fills its random part from the whole byte range', () => {
    const tails = new Set(Array.from({ length: 2_000 }, () => timeOrderedId().slice(-2)));
    expect(tails.size).toBeGreaterThan(200);
  });
});

describe('newMessageId', () => {
  it('is WhatsApp Web shaped: 3EB0 and 18 upper-case hex digits, 10 of them a 1/16 ms time stamp', () => {
    const before = Math.floor(Date.now() * 16) % 16 ** 10;
    const id = newMessageId();
    expect(id).toMatch(/^3EB0[0-9A-F]{18}$/);
    expect(sourceOfId(id)).toBe('web');
    const stamp = parseInt(id.slice(4, 14), 16);
    // performance.now() against Date.now(): allow a few ms of clock difference either way.
    expect(Math.abs(stamp - before)).toBeLessThan(16 * 50);
  });

  it('sorts in creation order and never repeats', () => {
    const ids = Array.from({ length: 20_000 }, () => newMessageId());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
