// Lazy, cached import of the baileys package (heavy), loaded only once media is first encrypted.

type Baileys = typeof import('baileys');

let loading: Promise<Baileys> | undefined;

export function loadBaileys(): Promise<Baileys> {
  loading ??= import('baileys').catch((err: unknown) => {
    loading = undefined; // let a later call retry instead of caching the failure
    throw err;
  });
  return loading;
}
