// A folder of files the sandbox names itself (32 random hex digits and an extension): under DATA_DIR, or in the store
// when nodes of a fleet share it (each node has a DATA_DIR of its own). No other name reaches the disk.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from '../../platform/store/db.js';

export class NamedFiles {
  private readonly folder: string;
  private readonly namePattern: RegExp;

  /** `shared`: the store, when several nodes share it (the files are kept there, readable by every node). */
  constructor(
    dataDir: string,
    private readonly subfolder: string,
    private readonly extension: string,
    private readonly shared?: Db,
  ) {
    this.folder = join(dataDir, subfolder);
    this.namePattern = new RegExp(`^[0-9a-f]{32}\\.${extension}$`);
  }

  /** Keeps the bytes under a new name, and answers it. */
  async add(bytes: Buffer): Promise<string> {
    const fileName = `${randomBytes(16).toString('hex')}.${this.extension}`;
    if (this.shared) {
      await this.shared
        .insertInto('sandbox_files')
        .values({ name: this.keyOf(fileName), data: bytes, created_at: Date.now() })
        .execute();
      return fileName;
    }
    await mkdir(this.folder, { recursive: true });
    await writeFile(join(this.folder, fileName), bytes, { flag: 'wx', mode: 0o600 });
    return fileName;
  }

  /**
   * The stored bytes, or null when the name is not one this folder makes or no such file exists. In the store first
   * (when shared), then under DATA_DIR (files kept there before the store was shared).
   */
  async read(fileName: string): Promise<Buffer | null> {
    if (!this.namePattern.test(fileName)) return null;
    if (this.shared) {
      const row = await this.shared.selectFrom('sandbox_files').select('data').where('name', '=', this.keyOf(fileName)).executeTakeFirst();
      if (row) return Buffer.from(row.data);
    }
    try {
      return await readFile(join(this.folder, fileName));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async remove(fileName: string): Promise<void> {
    if (!this.namePattern.test(fileName)) return;
    if (this.shared) await this.shared.deleteFrom('sandbox_files').where('name', '=', this.keyOf(fileName)).execute();
    await rm(join(this.folder, fileName), { force: true });
  }

  /** The file's key in the store: its folder and name. */
  private keyOf(fileName: string): string {
    return `${this.subfolder}/${fileName}`;
  }
}
