// The sandbox "CDN": encrypted media uploaded by senders, kept as files under DATA_DIR for recipients to fetch.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface UploadedMedia {
  url: string;
  directPath: string;
}

/** Only names this store creates: 32 lowercase hex digits and `.enc`; nothing else can reach the disk. */
const fileNamePattern = /^[0-9a-f]{32}\.enc$/;

export class SandboxMediaStore {
  private readonly folder: string;

  /** `serverUrl` is read at each upload, so the URL follows the configured base address (set after listen in tests). */
  constructor(
    dataDir: string,
    private readonly serverUrl: () => string,
  ) {
    this.folder = join(dataDir, 'sandbox-media');
  }

  async upload(encrypted: Buffer): Promise<UploadedMedia> {
    await mkdir(this.folder, { recursive: true });
    const fileName = `${randomBytes(16).toString('hex')}.enc`;
    await writeFile(join(this.folder, fileName), encrypted, { flag: 'wx', mode: 0o600 });
    return {
      directPath: `/sandbox/media/${fileName}`,
      url: `${this.serverUrl()}/messenger/sandbox/media/${fileName}`,
    };
  }

  /** The stored bytes, or null when the name is not one this store makes or no such file exists. */
  async read(fileName: string): Promise<Buffer | null> {
    if (!fileNamePattern.test(fileName)) return null;
    try {
      return await readFile(join(this.folder, fileName));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }
}
