// The service's default pacing of sends, used by every instance that did not set its own (settings/set `pacing`).
import { pacingLimits } from '../../../core/pacing.js';
import { flag, wholeNumber } from '../declare.js';

const pacingMinGapMs = wholeNumber({
  env: 'PACING_MIN_GAP_MS',
  default: 2000,
  ...pacingLimits.minGapMs,
  meaning: 'Shortest random gap between two paced messages of an instance.',
});

export const pacing = {
  pacingEnabled: flag({
    env: 'PACING_ENABLED',
    default: false,
    meaning:
      "Pace every instance's sends like a person (one message at a time across its chats, at most PACING_MAX_PER_MINUTE, a random gap between messages, a slower start in new chats). Off: sends leave as fast as the messenger takes them. An instance's own `pacing` (settings/set) overrides each field.",
  }),
  pacingMaxPerMinute: wholeNumber({
    env: 'PACING_MAX_PER_MINUTE',
    default: 20,
    ...pacingLimits.maxPerMinute,
    meaning: 'Most paced messages an instance sends in any 60 seconds.',
  }),
  pacingMinGapMs,
  pacingMaxGapMs: wholeNumber({
    env: 'PACING_MAX_GAP_MS',
    default: 6000,
    ...pacingLimits.maxGapMs,
    checks: [
      (value, settingValue) => (value < settingValue(pacingMinGapMs) ? `must be at least PACING_MIN_GAP_MS (${settingValue(pacingMinGapMs)})` : undefined),
    ],
    meaning: 'Longest random gap between two paced messages of an instance (the gap is drawn uniformly between the two).',
  }),
  pacingNewChatDelayMs: wholeNumber({
    env: 'PACING_NEW_CHAT_DELAY_MS',
    default: 10_000,
    ...pacingLimits.newChatDelayMs,
    meaning: 'Extra wait before a paced first message to a chat the instance has never sent a message to.',
  }),
};
