// What an instance's key store held in Evolution: its signal keys, and the credentials when they were kept beside them.

export interface SignalKey {
  type: string;
  id: string;
  /** The decoded value (Buffers as Buffers), as Baileys handed it to the store. */
  value: unknown;
}

export interface FoundKeys {
  /** Where they were found, for the report (a folder, or a Redis hash). */
  where: string;
  keys: SignalKey[];
  /** The credentials' text when the store kept them too (a Redis `creds` field, an old creds.json file). */
  credsText: string | null;
  /** Entries that are no signal key Baileys knows (listed in the report, not imported). */
  ignored: string[];
}
