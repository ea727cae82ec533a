import type { RunRecord } from '../machine/run-types.js';
import { KeyTable } from '../util/key-table.js';

/**
 * The rows this store instance last committed for runs that hold a lease: the runs its workers are executing. A pure
 * plan for such a run can be decided on the remembered row and written with a guard (revision, lease expiry, model
 * call count) instead of reading and locking the row first; if the guard fails the store reads the row and decides
 * again. It is only a shortcut: forgetting an entry is always safe.
 */
export class KnownRuns {
  private readonly rows = new KeyTable<RunRecord>();

  constructor(private readonly limit = 100_000) {}

  /** The remembered row of a run, if it belongs to `namespace`. */
  get(namespace: string, runId: string): RunRecord | undefined {
    const run = this.rows.get(runId);
    return run !== undefined && run.namespace === namespace ? run : undefined;
  }

  /** Records a committed write: a leased run is remembered, any other forgotten. */
  committed(run: RunRecord): void {
    if (run.lease === null) {
      this.rows.delete(run.runId);
      return;
    }
    if (this.rows.size >= this.limit && !this.rows.has(run.runId)) this.rows.clear();
    this.rows.set(run.runId, run);
  }

  /** Forgets a run whose row may have changed in a way this instance did not see commit. */
  forget(runId: string): void {
    this.rows.delete(runId);
  }
}
