// The sandbox playground: an instance's conversations with their statuses ticking, replying, and injecting a message from anyone.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Chat, MessageKey, StoredMessage } from '../api';
import { usePoll } from '../hooks';
import { messageText, numberOf, statusOf, timeOf } from '../format';
import { Errors, Field, Notice } from '../ui';
import type { InstanceView } from './instance-view';

const ticks: Record<string, { mark: string; label: string }> = {
  PENDING: { mark: '🕓', label: 'queued' },
  SERVER_ACK: { mark: '✓', label: 'sent' },
  DELIVERY_ACK: { mark: '✓✓', label: 'delivered' },
  READ: { mark: '✓✓', label: 'read' },
  PLAYED: { mark: '✓✓', label: 'played' },
  ERROR: { mark: '!', label: 'failed' },
};

export function ChatTab({ view }: { view: InstanceView }) {
  const { session, name } = view;
  const [chats, setChats] = useState<Chat[]>([]);
  const [open, setOpen] = useState<string | null>(null);
  const [messages, setMessages] = useState<StoredMessage[]>([]);
  const [errors, setErrors] = useState<string[]>([]);
  const [draft, setDraft] = useState('');
  const [newNumber, setNewNumber] = useState('');
  const read = useRef(new Set<string>());
  const nudge = view.events.length;

  usePoll(
    async () => {
      const list = await session.api.chats(name);
      setChats(list);
      if (open) {
        const page = await session.api.messages(name, open);
        const records = [...page.messages.records].reverse();
        setMessages(records);
        // Seen here: received messages are marked read, so their senders see READ.
        const unread: MessageKey[] = records.filter((m) => !m.key.fromMe && !read.current.has(m.key.id)).map((m) => m.key);
        if (unread.length > 0) {
          for (const key of unread) read.current.add(key.id);
          await session.api.markRead(name, unread).catch(() => undefined);
        }
      }
    },
    1500,
    [name, open, nudge],
  );

  const end = useRef<HTMLDivElement>(null);
  useEffect(() => end.current?.scrollIntoView?.({ block: 'end' }), [messages.length]);

  const send = async (event: Event) => {
    event.preventDefault();
    if (!open || !draft.trim()) return;
    try {
      await session.api.sendText(name, numberOf(open), draft);
      setDraft('');
      setErrors([]);
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  };
  const startChat = (event: Event) => {
    event.preventDefault();
    const digits = newNumber.replace(/\D/g, '');
    if (digits) setOpen(`${digits}@s.whatsapp.net`);
    setNewNumber('');
  };

  return (
    <div class="playground">
      <div class="chat card">
        <aside class="chat-list" aria-label="Conversations">
          <form onSubmit={startChat} class="new-chat">
            <label class="sr-only" for="new-chat-number">
              New conversation with number
            </label>
            <input id="new-chat-number" inputMode="tel" placeholder="New chat: number" value={newNumber} onInput={(e) => setNewNumber(e.currentTarget.value)} />
            <button type="submit" class="secondary small">
              Open
            </button>
          </form>
          <ul>
            {chats.map((chat) => (
              <li key={chat.remoteJid}>
                <button
                  type="button"
                  class={`chat-item${chat.remoteJid === open ? ' on' : ''}`}
                  onClick={() => setOpen(chat.remoteJid)}
                  aria-pressed={chat.remoteJid === open}
                >
                  <span class="strong">{chat.pushName || `+${numberOf(chat.remoteJid)}`}</span>
                  <span class="muted small ellipsis">{chat.lastMessage ? messageText(chat.lastMessage) : ''}</span>
                  {chat.unreadCount > 0 && <span class="unread">{chat.unreadCount}</span>}
                </button>
              </li>
            ))}
            {chats.length === 0 && <li class="muted small pad">No conversations yet.</li>}
          </ul>
        </aside>
        <section class="conversation" aria-label={open ? `Conversation with +${numberOf(open)}` : 'Conversation'}>
          {open ? (
            <>
              <header class="conversation-head">
                {chats.find((chat) => chat.remoteJid === open)?.pushName || ''} <span class="muted">+{numberOf(open)}</span>
              </header>
              <div class="bubbles" data-testid="bubbles">
                {messages.map((message) => {
                  const status = statusOf(message);
                  const tick = ticks[status] ?? { mark: '', label: status };
                  return (
                    <div key={message.id} class={`bubble ${message.key.fromMe ? 'out' : 'in'}`} data-status={message.key.fromMe ? status : undefined}>
                      {!message.key.fromMe && message.pushName ? <div class="from small">{message.pushName}</div> : null}
                      <div class="text">{messageText(message)}</div>
                      <div class="meta small">
                        {timeOf(message)}
                        {message.key.fromMe && (
                          <span class={`tick tick-${status}`} title={tick.label}>
                            {' '}
                            <span aria-hidden="true">{tick.mark}</span>
                            <span class="sr-only">{tick.label}</span>
                          </span>
                        )}
                      </div>
                    </div>
                  );
                })}
                <div ref={end} />
              </div>
              <form class="compose" onSubmit={send}>
                <label class="sr-only" for="compose-text">
                  Message
                </label>
                <input id="compose-text" placeholder="Type a message" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
                <button type="submit">Send</button>
              </form>
              <Errors messages={errors} />
            </>
          ) : (
            <p class="muted pad">Pick a conversation, or open one with a number.</p>
          )}
        </section>
      </div>
      <Inject view={view} />
    </div>
  );
}

function Inject({ view }: { view: InstanceView }) {
  const { session, name } = view;
  const [from, setFrom] = useState('');
  const [pushName, setPushName] = useState('');
  const [text, setText] = useState('');
  const [errors, setErrors] = useState<string[]>([]);
  const [done, setDone] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setDone(false);
    try {
      await session.api.inject(name, from.trim(), text, pushName.trim() || undefined);
      setErrors([]);
      setDone(true);
      setText('');
    } catch (error) {
      setErrors([error instanceof Error ? error.message : String(error)]);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="inject-title">
      <h2 id="inject-title">Inject an incoming message</h2>
      <p class="muted small">As if anyone wrote to this instance: your bot receives it as a real messages.upsert.</p>
      <Errors messages={errors} />
      <Field label="From (number)">
        {(id) => <input id={id} name="from" inputMode="tel" required value={from} onInput={(e) => setFrom(e.currentTarget.value)} />}
      </Field>
      <Field label="Sender's name (optional)">
        {(id) => <input id={id} name="pushName" value={pushName} onInput={(e) => setPushName(e.currentTarget.value)} />}
      </Field>
      <Field label="Text">
        {(id) => <textarea id={id} name="injectText" rows={3} required value={text} onInput={(e) => setText(e.currentTarget.value)} />}
      </Field>
      <div class="actions">
        <button type="submit">Inject</button>
        {done && <Notice>Delivered to {name}.</Notice>}
      </div>
    </form>
  );
}
