// Sending a text or a media file to a number.
import { useState } from 'preact/hooks';
import { messagesByField } from '../api';
import { Errors, Field, Notice } from '../ui';
import type { InstanceView } from './instance-view';

function mediaTypeOf(mime: string): string {
  if (mime.startsWith('image/')) return 'image';
  if (mime.startsWith('video/')) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  return 'document';
}

function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(new Error('the file could not be read'));
    reader.readAsDataURL(file);
  });
}

export function MessagesTab({ view }: { view: InstanceView }) {
  const { session, name } = view;
  const [number, setNumber] = useState('');
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [caption, setCaption] = useState('');
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [general, setGeneral] = useState<string[]>([]);
  const [sent, setSent] = useState('');

  const report = (error: unknown) => {
    const sorted = messagesByField(error, ['number', 'text', 'media', 'caption', 'mediatype']);
    setErrors(sorted.byField);
    setGeneral(sorted.general);
  };

  const send = async (event: Event) => {
    event.preventDefault();
    setSent('');
    try {
      if (file) {
        const media = await readBase64(file);
        const mimetype = file.type || 'application/octet-stream';
        const result = await session.api.sendMedia(name, {
          number: number.trim(),
          mediatype: mediaTypeOf(mimetype),
          media,
          fileName: file.name,
          caption,
          mimetype,
        });
        setSent(`Queued ${file.name} (${result.status}, id ${result.key.id}).`);
      } else {
        const result = await session.api.sendText(name, number.trim(), text);
        setSent(`Queued (${result.status}, id ${result.key.id}).`);
        setText('');
      }
      setErrors({});
      setGeneral([]);
    } catch (error) {
      report(error);
    }
  };

  return (
    <form class="card narrow" onSubmit={send} aria-labelledby="send-title">
      <h2 id="send-title">Send a message</h2>
      <Errors messages={general} />
      <Field label="To (number)" hint="with country code, or a full address" errors={errors.number}>
        {(id, describedBy) => (
          <input
            id={id}
            name="number"
            inputMode="tel"
            required
            value={number}
            aria-describedby={describedBy}
            onInput={(e) => setNumber(e.currentTarget.value)}
          />
        )}
      </Field>
      <Field label="Media file (optional)" hint="image, video, audio or document" errors={errors.media ?? errors.mediatype}>
        {(id, describedBy) => (
          <input id={id} name="file" type="file" aria-describedby={describedBy} onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        )}
      </Field>
      {file ? (
        <Field label="Caption" errors={errors.caption}>
          {(id) => <input id={id} name="caption" value={caption} onInput={(e) => setCaption(e.currentTarget.value)} />}
        </Field>
      ) : (
        <Field label="Text" errors={errors.text}>
          {(id, describedBy) => (
            <textarea id={id} name="text" rows={4} required value={text} aria-describedby={describedBy} onInput={(e) => setText(e.currentTarget.value)} />
          )}
        </Field>
      )}
      <div class="actions">
        <button type="submit">Send</button>
      </div>
      {sent && <Notice>{sent}</Notice>}
    </form>
  );
}
