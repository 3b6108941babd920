// Evolution's names of signal keys read back: a file name lost "/" and ":" (written "__" and "-"); each type's id comes
// back whole, so Baileys finds its keys under the ids it asks for.
import { describe, expect, it } from 'vitest';
import { keyOfField, keyOfFileName } from '../../src/import/key-names.js';
import { fileNameOf, linkedCreds, signalKeys } from '../support/evolution.js';

describe('signal key names', () => {
  it('every key of a linked device comes back from its file name with its own type and id', () => {
    const keys = signalKeys(linkedCreds('5511999990001'), 3);
    for (const [type, values] of Object.entries(keys)) {
      for (const id of Object.keys(values)) expect(keyOfFileName(`${fileNameOf(type, id)}.json`), `${type} ${id}`).toEqual({ type, id });
    }
  });

  it('ids of the shapes that lose characters: base64 sync key ids, sender keys of old and new groups, a user with a device', () => {
    expect(keyOfFileName('app-state-sync-key-AAAAAfz______+w==.json')).toEqual({ type: 'app-state-sync-key', id: 'AAAAAfz///+w==' });
    expect(keyOfFileName('sender-key-5511988887777-1600000000@g.us--5511988887777--2.json')).toEqual({
      type: 'sender-key',
      id: '5511988887777-1600000000@g.us::5511988887777::2',
    });
    expect(keyOfFileName('sender-key-memory-5511988887777-1600000000@g.us.json')).toEqual({ type: 'sender-key-memory', id: '5511988887777-1600000000@g.us' });
    expect(keyOfFileName('tctoken-123456789012345-3@lid.json')).toEqual({ type: 'tctoken', id: '123456789012345:3@lid' });
    expect(keyOfFileName('tctoken-__index.json')).toEqual({ type: 'tctoken', id: '__index' });
  });

  it('Redis fields keep their ids as written; creds and unknown kinds are no key', () => {
    expect(keyOfField('sender-key-120363012345678901@g.us::5511988887777::0')).toEqual({ type: 'sender-key', id: '120363012345678901@g.us::5511988887777::0' });
    expect(keyOfField('app-state-sync-version-regular_high')).toEqual({ type: 'app-state-sync-version', id: 'regular_high' });
    expect(keyOfField('creds')).toBeNull();
    expect(keyOfField('something-else-1')).toBeNull();
    expect(keyOfFileName('pre-key-1.txt')).toBeNull();
  });
});
