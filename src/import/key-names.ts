// Evolution's names of Baileys signal keys: `<type>-<id>` (Redis hash fields), and as file names in the instances
// folder the same with "/" written "__" and ":" written "-" (its use-multi-file-auth-state fixFileName).

/** The signal key types Baileys keeps (SignalDataTypeMap), longest first so a prefix match finds the right one. */
const keyTypes = [
  'app-state-sync-version',
  'app-state-sync-key',
  'sender-key-memory',
  'identity-key',
  'device-list',
  'lid-mapping',
  'sender-key',
  'pre-key',
  'session',
  'tctoken',
] as const;

export interface KeyName {
  type: string;
  id: string;
}

/** The type and id of a Redis hash field `<type>-<id>` (ids kept as written); null for `creds` or an unknown type. */
export function keyOfField(field: string): KeyName | null {
  for (const type of keyTypes) {
    if (field.startsWith(`${type}-`) && field.length > type.length + 1) return { type, id: field.slice(type.length + 1) };
  }
  return null;
}

/** A user's address with a device (`123:4@s.whatsapp.net`) as a file name writes it (`123-4@s.whatsapp.net`). */
const userWithDevice = /^(\d+)-(\d+)@(s\.whatsapp\.net|lid|hosted|hosted\.lid)$/;

/**
 * The original id of a key read from a file name. The file name lost "/" and ":"; what they were is known from the
 * shape of each type's ids: app-state sync key ids are base64 (their "/" became "__"), sender-key ids are
 * `<group>::<user>::<device>` (their "::" became "--"; an old-style group id keeps its single "-"), and a user's address
 * with a device had its ":" before the device. Other ids hold neither character.
 */
export function keyOfFileName(fileName: string): KeyName | null {
  if (!fileName.endsWith('.json')) return null;
  const key = keyOfField(fileName.slice(0, -'.json'.length));
  if (!key) return null;
  let id = key.id;
  if (key.type === 'app-state-sync-key') id = id.replace(/__/g, '/');
  else if (key.type === 'sender-key') id = id.replace(/--/g, '::');
  else id = id.replace(userWithDevice, '$1:$2@$3');
  return { type: key.type, id };
}
