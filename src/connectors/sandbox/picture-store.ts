// Profile pictures of sandbox accounts: JPEG files under DATA_DIR, served at a public URL as WhatsApp's picture host does.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Only names this store creates: 32 lowercase hex digits and `.jpg`; nothing else can reach the disk. */
const fileNamePattern = /^[0-9a-f]{32}\.jpg$/;

export class SandboxPictureStore {
  private readonly folder: string;

  /** `serverUrl` is read for each URL, so URLs follow the configured base address (set after listen in tests). */
  constructor(
    dataDir: string,
    private readonly serverUrl: () => string,
  ) {
    this.folder = join(dataDir, 'sandbox-pictures');
  }

  /** Keeps the JPEG and answers its file name (a new one per picture, so an old URL never shows the new picture). */
  async save(jpeg: Buffer): Promise<string> {
    await mkdir(this.folder, { recursive: true });
    const fileName = `${randomBytes(16).toString('hex')}.jpg`;
    await writeFile(join(this.folder, fileName), jpeg, { flag: 'wx', mode: 0o600 });
    return fileName;
  }

  /** The URL a picture is served at. */
  urlOf(fileName: string): string {
    return `${this.serverUrl()}/messenger/sandbox/pictures/${fileName}`;
  }

  async read(fileName: string): Promise<Buffer | null> {
    if (!fileNamePattern.test(fileName)) return null;
    try {
      return await readFile(join(this.folder, fileName));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async remove(fileName: string): Promise<void> {
    if (fileNamePattern.test(fileName)) await rm(join(this.folder, fileName), { force: true });
  }
}
