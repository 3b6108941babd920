// A folder under DATA_DIR of files the sandbox names itself (32 random hex digits and an extension): no other name reaches the disk.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export class NamedFiles {
  private readonly folder: string;
  private readonly namePattern: RegExp;

  constructor(
    dataDir: string,
    subfolder: string,
    private readonly extension: string,
  ) {
    this.folder = join(dataDir, subfolder);
    this.namePattern = new RegExp(`^[0-9a-f]{32}\\.${extension}$`);
  }

  /** Keeps the bytes under a new name, and answers it. */
  async add(bytes: Buffer): Promise<string> {
    await mkdir(this.folder, { recursive: true });
    const fileName = `${randomBytes(16).toString('hex')}.${this.extension}`;
    await writeFile(join(this.folder, fileName), bytes, { flag: 'wx', mode: 0o600 });
    return fileName;
  }

  /** The stored bytes, or null when the name is not one this folder makes or no such file exists. */
  async read(fileName: string): Promise<Buffer | null> {
    if (!this.namePattern.test(fileName)) return null;
    try {
      return await readFile(join(this.folder, fileName));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async remove(fileName: string): Promise<void> {
    if (this.namePattern.test(fileName)) await rm(join(this.folder, fileName), { force: true });
  }
}
