// Identifiers that sort by creation time (UUID version 7), so store indexes grow at their end instead of at random.
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(16 * 256);
let offset = pool.length;

/** Random bytes from a pool refilled 4 KiB at a time (one system call per 256 ids). */
export function pooledRandom(size: number): Buffer {
  if (offset + size > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + size);
  offset += size;
  return bytes;
}

let lastMs = 0;
let sequence = 0;

/** A UUIDv7: 48 bits of Unix milliseconds, a 12-bit counter within the millisecond, 62 random bits. */
export function timeOrderedId(): string {
  let now = Date.now();
  if (now <= lastMs) {
    sequence++;
    if (sequence > 0xfff) {
      // More than 4096 ids in one millisecond: borrow the next millisecond to stay ordered.
      lastMs++;
      sequence = 0;
    }
    now = lastMs;
  } else {
    lastMs = now;
    sequence = 0;
  }
  const bytes = Buffer.from(pooledRandom(16));
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | ((sequence >> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
