// Profile pictures of sandbox accounts: JPEG files (DATA_DIR, or the shared store), served at a public URL as WhatsApp's picture host does.
import type { Db } from '../../platform/store/db.js';
import { NamedFiles } from './named-files.js';

export class SandboxPictureStore {
  private readonly files: NamedFiles;

  /** `serverUrl` is read for each URL, so URLs follow the configured base address (set after listen in tests). */
  constructor(
    dataDir: string,
    private readonly serverUrl: () => string,
    /** The store, when nodes of a fleet share it: the files are kept there (see NamedFiles). */
    shared?: Db,
  ) {
    this.files = new NamedFiles(dataDir, 'sandbox-pictures', 'jpg', shared);
  }

  /** Keeps the JPEG and answers its file name (a new one per picture, so an old URL never shows the new picture). */
  save(jpeg: Buffer): Promise<string> {
    return this.files.add(jpeg);
  }

  /** The URL a picture is served at. */
  urlOf(fileName: string): string {
    return `${this.serverUrl()}/messenger/sandbox/pictures/${fileName}`;
  }

  read(fileName: string): Promise<Buffer | null> {
    return this.files.read(fileName);
  }

  remove(fileName: string): Promise<void> {
    return this.files.remove(fileName);
  }
}
