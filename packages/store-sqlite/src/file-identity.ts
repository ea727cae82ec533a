import { type Stats, statSync } from 'node:fs';

/**
 * Watches a database file's identity (device and inode) on an unref'd timer. When the file at the path is deleted,
 * or another file takes its place, the open connection still writes into the old one, which nobody else reads:
 * `onLost` is called once with why, and the store refuses every read and write from then on.
 */
export class FileIdentityWatch {
  private readonly timer: NodeJS.Timeout;
  private readonly device: number;
  private readonly inode: number;

  constructor(
    private readonly path: string,
    everyMs: number,
    private readonly onLost: (why: string) => void,
  ) {
    const first = statSync(path);
    this.device = first.dev;
    this.inode = first.ino;
    this.timer = setInterval(() => this.check(), everyMs);
    this.timer.unref?.();
  }

  /** Compares the file now at the path with the one opened; stops at the first difference. */
  check(): void {
    let now: Stats | undefined;
    try {
      now = statSync(this.path, { throwIfNoEntry: false });
    } catch {
      return; // A path that cannot be read now (permissions, a slow disk) is checked again at the next turn.
    }
    if (now !== undefined && now.dev === this.device && now.ino === this.inode) return;
    this.stop();
    const what = now === undefined ? 'was deleted' : 'was replaced by another file';
    this.onLost(
      `the SQLite database file ${this.path} ${what} while open: this connection would write where nobody reads, so the store stopped (reopen it)`,
    );
  }

  /** Stops watching. */
  stop(): void {
    clearInterval(this.timer);
  }
}
