import type { HistoryEntry } from '@docket/core';
import type { KnownRuns } from '@docket/core/store';
import {
  type CallbackEventRecord,
  checkWrite,
  isThenable,
  KeyTable,
  type PlanResult,
  type RunRecord,
  type TransactPlan,
} from '@docket/core/store';
import type { PendingWrite } from '../../writes/run-writes.js';

/** A pure plan folded into a held run: its value is answered once the claim's transaction commits. */
interface Fused {
  value: unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * One run of a held claim: its row as the claim selected it, and everything the transaction will write for it. The
 * arrays are never changed in place (core's write may still hold them): a fused plan replaces them with longer ones,
 * each made at its size (an array grown by `push` reserves room for 17).
 */
interface HeldRun {
  batch: HeldBatch;
  runId: string;
  /**
   * The row as selected, until the batch's commit statement is written from it; then `null`, so that one record less
   * per run stays alive while the commit is awaited.
   */
  base: RunRecord | null;
  latest: RunRecord;
  history: readonly HistoryEntry[];
  events: readonly CallbackEventRecord[];
  fused: readonly Fused[];
}

const NONE_FUSED: readonly Fused[] = Object.freeze([]);
const NO_HISTORY: readonly HistoryEntry[] = Object.freeze([]);
const NO_EVENTS: readonly CallbackEventRecord[] = Object.freeze([]);

/** The runs of one held claim transaction. `done` resolves (never rejects) once it committed or failed. */
export interface HeldBatch {
  closed: boolean;
  runs: HeldRun[];
  /** The writes `close` answered, in the order of `runs` (kept to write them again one by one, see `alone`). */
  writes: PendingWrite[] | null;
  done: Promise<void>;
  finish: () => void;
}

/**
 * Claims whose transaction is still open: the claim locked and selected the rows, core planned the claims, the runs
 * were handed to their pages, and the writes wait for the end of the current turn of the event loop. A page whose
 * handler settled synchronously (or within the same turn) sends its pure commit plan here; it is decided on the claimed
 * record and written together with the claim, in the claim's transaction: one row version and one commit instead of
 * two of each. Every other call for a held run waits until the claim's transaction has ended.
 */
export class HeldClaims {
  private readonly held = new KeyTable<HeldRun>();
  /** The batches whose transaction has not ended yet. */
  private readonly open = new Set<HeldBatch>();

  /** Holds the claims `writes` (each run's row as selected and core's claim) in a new batch. */
  hold(writes: readonly PendingWrite[]): HeldBatch {
    let resolveDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve;
    });
    const finish = () => {
      this.open.delete(batch);
      resolveDone();
    };
    const batch: HeldBatch = { closed: false, runs: [], writes: null, done, finish };
    this.open.add(batch);
    for (let i = 0; i < writes.length; i++) {
      const { current, write } = writes[i] as PendingWrite;
      const run: HeldRun = {
        batch,
        runId: current.runId,
        base: current,
        latest: write.run,
        history: write.history,
        events: write.events,
        fused: NONE_FUSED,
      };
      batch.runs.push(run);
      this.held.set(current.runId, run);
    }
    return batch;
  }

  /** Resolves once every batch held so far has committed or failed (a store closing waits for it). */
  async allEnded(): Promise<void> {
    await Promise.all([...this.open].map((batch) => batch.done));
  }

  /** The end of the held claim of `runId`'s transaction, or `undefined` when the run is not held. */
  ended(runId: string): Promise<void> | undefined {
    return this.held.get(runId)?.batch.done;
  }

  /**
   * Folds a pure plan into the held claim of its run: answers its value's promise, or `undefined` when the run is not
   * held (any more), or the plan answered a promise, wrote nothing, threw, broke the write contract, or puts a flow
   * hold (a write of the task's record, not the run's): then the caller waits for `ended` and decides it again on the
   * committed row.
   */
  fuse<T>(namespace: string, runId: string, plan: TransactPlan<T, never>): Promise<T> | undefined {
    const run = this.held.get(runId);
    if (run === undefined || run.batch.closed || run.latest.namespace !== namespace) return undefined;
    let planned: PlanResult<T>;
    try {
      const answer = plan(undefined as never, run.latest);
      if (isThenable(answer)) return undefined;
      planned = answer;
      if (planned.write === null || planned.write.hold !== undefined) return undefined;
      // A write that creates children is left out (a child key already taken must fail it alone); a child's settle
      // is folded, and the commit follows what it leads to (`commitHeld`).
      if (planned.write.children !== undefined) return undefined;
      checkWrite(run.latest, planned.write);
    } catch {
      return undefined;
    }
    const { write, value } = planned;
    run.latest = write.run;
    run.history = run.history.concat(write.history);
    if (write.events.length > 0) run.events = run.events.concat(write.events);
    return new Promise<T>((resolve, reject) => {
      run.fused = run.fused.concat({ value, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Closes a batch to fusing and answers its writes: each run from its selected row to its latest record. */
  close(batch: HeldBatch): PendingWrite[] {
    batch.closed = true;
    const writes: PendingWrite[] = new Array(batch.runs.length);
    for (let i = 0; i < batch.runs.length; i++) {
      const run = batch.runs[i] as HeldRun;
      if (run.base === null) throw new Error('internal: a held batch closed twice');
      writes[i] = {
        current: run.base,
        write: { run: run.latest, history: run.history as HistoryEntry[], events: run.events as CallbackEventRecord[] },
      };
      // The caller writes the commit from `writes` now; nothing reads the selected row or the arrays after it.
      run.base = null;
      run.history = NO_HISTORY;
      run.events = NO_EVENTS;
    }
    batch.writes = writes;
    return writes;
  }

  /**
   * The batch's transaction was refused by the server for one of its writes, and rolled back: nothing of it holds,
   * the claims included. Each run's write (its claim and what was folded into it) is tried again in a transaction of
   * its own, guarded by the row's revision as selected (another worker may have claimed the run meanwhile): the
   * write at fault gets the error, the others land. `write` runs one write and answers whether it landed.
   */
  async alone(
    batch: HeldBatch,
    known: KnownRuns,
    write: (pending: PendingWrite) => Promise<boolean>,
    error: (runId: string, cause: unknown) => unknown,
  ): Promise<void> {
    const writes = batch.writes ?? [];
    await Promise.all(
      batch.runs.map(async (run, i) => {
        const pending = writes[i];
        let landed = false;
        let failure: unknown = null;
        try {
          landed = pending !== undefined && (await write(pending));
        } catch (cause) {
          failure = cause;
        }
        this.release(run);
        if (landed) known.committed(run.latest);
        else known.forget(run.runId);
        for (const fused of run.fused) {
          if (landed) fused.resolve(fused.value);
          else fused.reject(error(run.runId, failure));
        }
      }),
    );
    batch.finish();
  }

  /** Whether a closed batch folded any plan in (its commit must then wait for the flush, as every settle's does). */
  fusedAny(batch: HeldBatch): boolean {
    return batch.runs.some((run) => run.fused.length > 0);
  }

  /** The batch's transaction committed: answers the fused plans and remembers the written rows. */
  committed(batch: HeldBatch, known: KnownRuns): void {
    const runs = batch.runs;
    for (let i = 0; i < runs.length; i++) {
      const run = runs[i] as HeldRun;
      known.committed(run.latest);
      this.release(run);
      for (let f = 0; f < run.fused.length; f++) {
        const fused = run.fused[f] as Fused;
        fused.resolve(fused.value);
      }
    }
    batch.finish();
  }

  /** The batch's transaction failed or its outcome is unknown: rejects the fused plans with `error(runId)`. */
  failed(batch: HeldBatch, known: KnownRuns, error: (runId: string) => unknown): void {
    for (const run of batch.runs) {
      known.forget(run.runId);
      this.release(run);
      for (const fused of run.fused) fused.reject(error(run.runId));
    }
    batch.finish();
  }

  private release(run: HeldRun): void {
    if (this.held.get(run.runId) === run) this.held.delete(run.runId);
  }
}
