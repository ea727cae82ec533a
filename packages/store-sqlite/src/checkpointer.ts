import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The thread's script (CommonJS, evaluated by `Worker`): its own connection to the file, and a PASSIVE checkpoint
 * every `intervalMs`. PASSIVE never waits for readers or writers; a checkpoint another process is running makes
 * this one answer "busy" at once, and the next tick tries again.
 */
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db = null;
try {
  db = new Database(workerData.filename, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
} catch {}
const tick = () => {
  try {
    db?.pragma('wal_checkpoint(PASSIVE)');
  } catch {}
};
const timer = setInterval(tick, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'close') return;
  clearInterval(timer);
  try {
    db?.close();
  } catch {}
  parentPort.close();
});
`;

/**
 * Copies the write-ahead log back into the database file on a thread of its own. Without it the commit that pushes
 * the log past `wal_autocheckpoint` runs the whole checkpoint inside the worker's event loop (~150 ms for 10,000
 * pages on a slow disk), and every run, heartbeat and timer of that process waits. The connection's automatic
 * checkpoint stays as the safety valve; with this thread ahead of it, it finds little or nothing left to copy.
 */
export class Checkpointer {
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();
  private readonly starting: NodeJS.Timeout;

  /**
   * The thread starts one interval after the store opens: a short-lived process (a CLI command, a cold start that
   * runs one page) exits before and never pays for a thread it would not use.
   */
  constructor(
    private readonly filename: string,
    private readonly intervalMs: number,
  ) {
    this.starting = setTimeout(() => this.start(), intervalMs);
    this.starting.unref();
  }

  private start(): void {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(SOURCE, {
      eval: true,
      workerData: { filename: this.filename, driver, intervalMs: this.intervalMs },
    });
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    // A thread that fails (a file it cannot open, a driver it cannot load) only leaves the automatic checkpoint.
    worker.on('error', () => undefined);
    worker.unref();
    this.worker = worker;
  }

  /** Stops the thread (or its start) and closes its connection. */
  async close(): Promise<void> {
    clearTimeout(this.starting);
    const worker = this.worker;
    this.worker = null;
    if (worker === null) return;
    // Referenced again so that the process waits for the thread to close its connection and exit.
    worker.ref();
    worker.postMessage('close');
    await this.exited;
  }
}
