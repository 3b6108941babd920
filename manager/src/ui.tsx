// Small building blocks of the pages: labelled fields with their messages, state badges, a confirming button.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

let nextId = 0;
/** A stable id for a label and its input. */
function useId(prefix: string): string {
  const [id] = useState(() => `${prefix}-${++nextId}`);
  return id;
}

interface FieldProps {
  label: string;
  hint?: string;
  errors?: string[];
  children: (id: string, describedBy: string | undefined) => ComponentChildren;
}

/** A label, the input the caller draws with the given id, a hint, and the API's messages about this field. */
export function Field({ label, hint, errors, children }: FieldProps) {
  const id = useId('f');
  const errorId = errors?.length ? `${id}-errors` : undefined;
  return (
    <div class={`field${errors?.length ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children(id, errorId)}
      {hint && <small class="hint">{hint}</small>}
      {errorId && (
        <ul class="field-errors" id={errorId} role="alert">
          {errors?.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Check({ label, checked, onChange, hint }: { label: string; checked: boolean; onChange: (value: boolean) => void; hint?: string }) {
  return (
    <label class="check">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.currentTarget.checked)} />
      <span>
        {label}
        {hint && <small class="hint">{hint}</small>}
      </span>
    </label>
  );
}

export function Errors({ messages }: { messages: string[] }) {
  if (messages.length === 0) return null;
  return (
    <div class="alert error" role="alert">
      {messages.map((message) => (
        <p key={message}>{message}</p>
      ))}
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="alert ok" role="status">
      {children}
    </div>
  );
}

/** A figure at a glance: its label, its value, and a tone (`bad`, `ok`…) when it needs attention. */
export type Tile = [label: string, value: string, tone?: string];

/** A row of figures at a glance (the health and cluster pages). */
export function Tiles({ tiles }: { tiles: Tile[] }) {
  return (
    <div class="tiles">
      {tiles.map(([label, value, tone]) => (
        <div key={label} class={`tile${tone ? ` ${tone}` : ''}`}>
          <div class="muted small">{label}</div>
          <div class="tile-value">{value}</div>
        </div>
      ))}
    </div>
  );
}

export function StateBadge({ state }: { state: string }) {
  return <span class={`badge state-${state}`}>{state}</span>;
}

/** A button that asks "Are you sure?" in place before doing something that cannot be undone. */
export function ConfirmButton({ label, question, onConfirm, danger }: { label: string; question: string; onConfirm: () => Promise<void>; danger?: boolean }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" class={danger ? 'danger' : 'secondary'} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <fieldset class="confirm">
      <legend>{question}</legend>
      <button
        type="button"
        class={danger ? 'danger' : ''}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </fieldset>
  );
}

/** A picture of the account, or its initials when there is none (or it cannot be shown). */
export function Avatar({ url, name }: { url?: string | null; name: string }) {
  const [failed, setFailed] = useState(false);
  const initials =
    name
      .split(/\s+/)
      .filter(Boolean)
      .slice(0, 2)
      .map((word) => word[0]?.toUpperCase() ?? '')
      .join('') || '?';
  if (url && !failed) return <img class="avatar" src={url} alt="" onError={() => setFailed(true)} />;
  return (
    <span class="avatar" aria-hidden="true">
      {initials}
    </span>
  );
}
