// The event catalogue: Evolution's events, their wire names, URL suffixes and accepted spellings.
import { describe, expect, it } from 'vitest';
import { eventNames, eventSuffix, resolveEventName, wireName } from '../../src/core/event-catalog.js';

describe('event catalogue', () => {
  it("has Evolution's 31 events with wire names and suffixes", () => {
    expect(eventNames).toHaveLength(31);
    expect(wireName('MESSAGES_UPSERT')).toBe('messages.upsert');
    expect(eventSuffix('GROUP_PARTICIPANTS_UPDATE')).toBe('group-participants-update');
    expect(eventSuffix('TYPEBOT_CHANGE_STATUS')).toBe('typebot-change-status');
    expect(resolveEventName('GROUPS_UPDATE')).toBe('GROUP_UPDATE');
    expect(resolveEventName('messages.upsert')).toBe('MESSAGES_UPSERT');
    expect(resolveEventName('NOPE')).toBeUndefined();
  });
});
