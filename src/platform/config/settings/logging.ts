// How log lines are written: human-readable on a terminal, JSON lines for log collectors.
import { text } from '../declare.js';
import { logFormats } from '../../log-format.js';

export const logging = {
  logFormat: text({
    env: 'LOG_FORMAT',
    default: 'auto',
    tidy: (value) => value.toLowerCase(),
    checks: [(format) => (logFormats.includes(format) ? undefined : `must be auto, pretty or json (got "${format}")`)],
    meaning:
      '`pretty`: one readable line per entry (time, level, instance, request id, message); `json`: one JSON object per line, for log collectors; `auto`: pretty when standard output is a terminal, JSON otherwise.',
  }),
};
