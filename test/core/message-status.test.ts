// Message status progression: the steps a receipt implies, and stale receipts ignored.
import { describe, expect, it } from 'vitest';
import { statusSteps } from '../../src/core/message-status.js';

describe('message status progression', () => {
  it('records implied steps and ignores stale receipts', () => {
    expect(statusSteps('PENDING', 'READ')).toEqual(['SERVER_ACK', 'DELIVERY_ACK', 'READ']);
    expect(statusSteps('SERVER_ACK', 'DELIVERY_ACK')).toEqual(['DELIVERY_ACK']);
    expect(statusSteps('READ', 'DELIVERY_ACK')).toEqual([]);
    expect(statusSteps('PENDING', 'ERROR')).toEqual(['ERROR']);
    expect(statusSteps('ERROR', 'READ')).toEqual([]);
  });

  it('moves an edited or deleted message no further (a late receipt does not undo the change)', () => {
    expect(statusSteps('EDITED', 'READ')).toEqual([]);
    expect(statusSteps('DELETED', 'DELIVERY_ACK')).toEqual([]);
    expect(statusSteps('DELETED', 'ERROR')).toEqual([]);
  });
});
