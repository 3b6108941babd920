// The sandbox "CDN": encrypted media uploaded by senders, kept as files under DATA_DIR for recipients to fetch.
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
  ) {
    this.files = new NamedFiles(dataDir, 'sandbox-media', 'enc');
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
