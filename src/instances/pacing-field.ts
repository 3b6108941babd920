// The `pacing` field of instance/create and settings/set: a Switchboard extension, each field optional and checked.
import { Type } from 'typebox';
import { pacingLimits } from '../core/pacing.js';

const whole = (limits: { min: number; max: number }, description: string) =>
  Type.Optional(Type.Integer({ minimum: limits.min, maximum: limits.max, description }));

export const pacingField = {
  pacing: Type.Optional(
    Type.Object(
      {
        enabled: Type.Optional(Type.Boolean({ description: 'Pace this instance’s sends (one at a time across its chats)' })),
        maxPerMinute: whole(pacingLimits.maxPerMinute, 'Most messages leaving in any 60 seconds'),
        minGapMs: whole(pacingLimits.minGapMs, 'Shortest random gap between two messages (ms)'),
        maxGapMs: whole(pacingLimits.maxGapMs, 'Longest random gap between two messages (ms); at least minGapMs'),
        newChatDelayMs: whole(pacingLimits.newChatDelayMs, 'Extra wait before the first message to a chat never written to (ms)'),
      },
      {
        additionalProperties: false,
        description: 'Switchboard extension: sending like a person. Fields left out keep their current value (the PACING_* defaults until set).',
      },
    ),
  ),
};
