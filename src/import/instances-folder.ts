// Signal keys in Evolution's instances folder: one JSON file per key in `<folder>/<instance id>/` (older releases: the
// instance name), named `<type>-<id>.json`.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseBufferJson } from './baileys-json.js';
import { keyOfFileName } from './key-names.js';
import type { FoundKeys, SignalKey } from './signal-keys.js';

/** Files read at once: enough to keep the disk busy, few enough to stay under the open-file limit. */
const readsAtOnce = 64;

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** The folder of an instance's keys, or null when there is none. */
export async function keysFolderOf(root: string, instance: { id: string; name: string }): Promise<string | null> {
  for (const candidate of [instance.id, instance.name]) {
    // A name is a folder name only when it holds no path separator ("." and ".." are never names either).
    if (!candidate || /[/\\]/.test(candidate) || candidate === '.' || candidate === '..') continue;
    const folder = join(root, candidate);
    if (await isFolder(folder)) return folder;
  }
  return null;
}

/** Reads every key file of a folder; a file that is not JSON fails the whole instance (it names the file). */
export async function readKeysFolder(folder: string): Promise<FoundKeys> {
  const names = (await readdir(folder)).sort();
  const keys: SignalKey[] = [];
  const ignored: string[] = [];
  let credsText: string | null = null;
  const wanted: { name: string; type: string; id: string }[] = [];
  for (const name of names) {
    if (name === 'creds.json') {
      credsText = await readFile(join(folder, name), 'utf8');
      continue;
    }
    const key = keyOfFileName(name);
    if (key) wanted.push({ name, ...key });
    else ignored.push(name);
  }
  for (let i = 0; i < wanted.length; i += readsAtOnce) {
    const batch = wanted.slice(i, i + readsAtOnce);
    const texts = await Promise.all(batch.map((file) => readFile(join(folder, file.name), 'utf8')));
    batch.forEach((file, j) => {
      keys.push({ type: file.type, id: file.id, value: parseBufferJson(texts[j], `key file ${join(folder, file.name)}`, 1) });
    });
  }
  return { where: folder, keys, credsText, ignored };
}
