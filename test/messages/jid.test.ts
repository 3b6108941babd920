// Recipient addresses: how a number, group id or JID given to the API becomes the JID a message goes to (Evolution §8.1).
import { describe, expect, it } from 'vitest';
import { toJid } from '../../src/messages/jid.js';

describe('recipient addresses (Evolution §8.1)', () => {
  it.each([
    ['5511999999999', '5511999999999@s.whatsapp.net'],
    ['5531999999999', '553199999999@s.whatsapp.net'],
    ['+55 (11) 99999-9999', '5511999999999@s.whatsapp.net'],
    ['5215512345678', '525512345678@s.whatsapp.net'],
    ['120363012345678901', '120363012345678901@g.us'],
    ['120363012345678901@g.us', '120363012345678901@g.us'],
    ['status@broadcast', 'status@broadcast'],
    ['5511999999999:12@s.whatsapp.net', '5511999999999@s.whatsapp.net'],
    ['4915112345678', '4915112345678@s.whatsapp.net'],
  ])('%s → %s', (input, expected) => {
    expect(toJid(input)).toBe(expected);
  });

  it('refuses what cannot be a number, naming the field', () => {
    expect(() => toJid('abc')).toThrow(/number must be a phone number/);
    expect(() => toJid('12', 'statusJidList[0]')).toThrow(/statusJidList\[0\]/);
  });
});
