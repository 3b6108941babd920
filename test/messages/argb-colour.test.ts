// Colours given to the API (status backgrounds) as the ARGB integers WhatsApp expects.
import { describe, expect, it } from 'vitest';
import { argbFromColor } from '../../src/messages/compose.js';

describe('colours', () => {
  it('turns colours into ARGB integers', () => {
    expect(argbFromColor('#008000')).toBe(0xff008000);
    expect(argbFromColor('80FF0000')).toBe(0x80ff0000);
    expect(() => argbFromColor('green')).toThrow(/backgroundColor/);
  });
});
