import { statSync } from "node:fs";
import { StoreError } from "../../errors.js";

/**
 * The file a store opened (device and inode), to notice it deleted or replaced under this
 * process (a restore, a mistaken `rm`): what this process reads is then a store nobody else sees,
 * and what it writes is lost.
 */
export class FileIdentity {
  private readonly opened: { dev: number; ino: number } | undefined;

  constructor(private readonly file: string) {
    this.opened = identity(file);
  }

  /** Throws when the file at the path is no longer the one opened. */
  check(): void {
    if (!this.opened) return;
    const now = identity(this.file);
    if (now?.dev === this.opened.dev && now.ino === this.opened.ino) return;
    throw new StoreError(`store ${this.file} was ${now ? "replaced by another file" : "deleted"} while this process had it open: what it reads and writes is no longer that store; restart this process`, { gone: true });
  }
}

function identity(file: string): { dev: number; ino: number } | undefined {
  try {
    const stats = statSync(file, { throwIfNoEntry: false });
    return stats && { dev: stats.dev, ino: stats.ino };
  } catch {
    return undefined;
  }
}
