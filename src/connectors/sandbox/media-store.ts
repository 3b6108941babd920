// The sandbox "CDN": encrypted media uploaded by senders, kept as files (DATA_DIR, or the shared store) for recipients.
import type { Db } from '../../platform/store/db.js';
import { NamedFiles } from './named-files.js';

export interface UploadedMedia {
  url: string;
  directPath: string;
}

export class SandboxMediaStore {
  private readonly files: NamedFiles;

  /** `serverUrl` is read at each upload, so the URL follows the configured base address (set after listen in tests). */
  constructor(
    dataDir: string,
    private readonly serverUrl: () => string,
    /** The store, when nodes of a fleet share it: the files are kept there (see NamedFiles). */
    shared?: Db,
  ) {
    this.files = new NamedFiles(dataDir, 'sandbox-media', 'enc', shared);
  }

  async upload(encrypted: Buffer): Promise<UploadedMedia> {
    const fileName = await this.files.add(encrypted);
    return {
      directPath: `/sandbox/media/${fileName}`,
      url: `${this.serverUrl()}/messenger/sandbox/media/${fileName}`,
    };
  }

  /** The stored bytes, or null when the name is not one this store makes or no such file exists. */
  read(fileName: string): Promise<Buffer | null> {
    return this.files.read(fileName);
  }
}
