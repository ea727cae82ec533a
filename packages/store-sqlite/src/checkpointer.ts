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
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(filename: string, intervalMs: number) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(SOURCE, { eval: true, workerData: { filename, driver, intervalMs } });
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    // A thread that fails (a file it cannot open, a driver it cannot load) only leaves the automatic checkpoint.
    this.worker.on('error', () => undefined);
    this.worker.unref();
  }

  /** Stops the thread and closes its connection. */
  async close(): Promise<void> {
    // Referenced again so that the process waits for the thread to close its connection and exit.
    this.worker.ref();
    this.worker.postMessage('close');
    await this.exited;
  }
}
