// Choosing events: every name of the catalogue, or all of them (an empty list).
import { eventNames } from '../format';
import { Check } from '../ui';

export function EventPicker({ legend, events, onChange }: { legend: string; events: string[]; onChange: (events: string[]) => void }) {
  const all = events.length === 0;
  return (
    <fieldset class="events">
      <legend>{legend}</legend>
      <Check label="All events" checked={all} onChange={(value) => onChange(value ? [] : ['MESSAGES_UPSERT'])} />
      {!all && (
        <div class="event-grid">
          {eventNames.map((event) => (
            <Check
              key={event}
              label={event}
              checked={events.includes(event)}
              onChange={(value) => onChange(value ? [...events, event] : events.filter((e) => e !== event))}
            />
          ))}
        </div>
      )}
    </fieldset>
  );
}
