// Identifiers that sort by creation time (UUID version 7), so store indexes grow at their end instead of at random.
import { randomFillSync } from 'node:crypto';

const pool = new Uint8Array(4096);
let offset = pool.length;

/** A random byte from a pool refilled 4 KiB at a time (one system call per 256 ids). */
export function randomByte(): number {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return pool[offset++];
}

/** Two lowercase hex digits per byte value: ids are built on every send, and Buffer round trips showed in profiles. */
export const hexOfByte: readonly string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** `count` random bytes as lowercase hex. */
function randomHex(count: number): string {
  let hex = '';
  for (let i = 0; i < count; i++) hex += hexOfByte[randomByte()];
  return hex;
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
  // 48 bits do not fit a 32-bit operation: the upper 16 and lower 32 bits of the milliseconds apart.
  const high = Math.floor(now / 2 ** 32);
  const low = now >>> 0;
  const time =
    hexOfByte[(high >>> 8) & 0xff] +
    hexOfByte[high & 0xff] +
    hexOfByte[low >>> 24] +
    hexOfByte[(low >>> 16) & 0xff] +
    '-' +
    hexOfByte[(low >>> 8) & 0xff] +
    hexOfByte[low & 0xff];
  const version = hexOfByte[0x70 | ((sequence >> 8) & 0x0f)] + hexOfByte[sequence & 0xff];
  const variant = hexOfByte[0x80 | (randomByte() & 0x3f)] + hexOfByte[randomByte()];
  return `${time}-${version}-${variant}-${randomHex(6)}`;
}
