import type { Statements } from '../statements.js';

/**
 * The statuses whose runs `docket_run_counts` counts: parked (waiting, blocked, paused) and finished (success,
 * failed, cancelled). Pending, retrying, running and pausing runs are counted from the claim and lease indexes,
 * which hold exactly them, so the claim and settle of an ordinary run change one count: at its finish.
 */
export const COUNTED_STATUSES: ReadonlySet<string> = new Set([
  'waiting',
  'blocked',
  'paused',
  'success',
  'failed',
  'cancelled',
]);

/**
 * The count changes of one batch transaction (see `commit-batcher.ts`), added up in memory and written with one
 * statement per changed count just before the COMMIT, instead of one upsert per run: a batch that settles 256 runs
 * of one task writes two rows (its finished count, its minute) where it wrote 512. The changes of an item rolled back
 * to its savepoint are dropped with it, those of an aborted batch with the batch. Outside a batch (a start in the
 * application's own transaction) each change is written at once.
 */
export class CountBuffer {
  private active = false;
  private readonly kept = new Map<string, Delta>();
  private item: Delta[] = [];

  constructor(private readonly s: () => Statements) {}

  /** Adds `n` to a count: to the current item's changes inside a batch, or written at once outside one. */
  add(delta: Delta): void {
    if (this.active) this.item.push(delta);
    else write(this.s(), delta);
  }

  /** A batch transaction began: changes are held from now on. */
  begin(): void {
    this.active = true;
    this.kept.clear();
    this.item = [];
  }

  /** The current item ended: its changes are kept (`true`) or dropped with its savepoint (`false`). */
  itemEnded(kept: boolean): void {
    if (kept) {
      for (const delta of this.item) {
        const sum = this.kept.get(delta.key);
        if (sum === undefined) this.kept.set(delta.key, { ...delta });
        else sum.n += delta.n;
      }
    }
    this.item = [];
  }

  /** Writes the batch's kept changes, in its transaction, before the COMMIT; a throw aborts the batch. */
  flush(): void {
    const s = this.s();
    for (const delta of this.kept.values()) if (delta.n !== 0) write(s, delta);
    this.end();
  }

  /** The batch ended without writing (rolled back): its changes are forgotten. */
  end(): void {
    this.active = false;
    this.kept.clear();
    this.item = [];
  }
}

/** One change to a count: of runs in a status (`status`), or settled in a minute (`minute`). */
type Delta =
  | { key: string; namespace: string; taskName: string; taskVersion: string; status: string; minute?: never; n: number }
  | { key: string; namespace: string; minute: number; status?: never; n: number };

function write(s: Statements, d: Delta): void {
  if (d.minute !== undefined) s.addSettled.run(d.namespace, d.minute, d.n);
  else s.addCount.run(d.namespace, d.taskName, d.taskVersion, d.status, d.n);
}

/**
 * Adds a run's move from `before` to `after` to the counts, in the caller's transaction; `null` is a run inserted
 * (`before`) or deleted (`after`).
 */
export function countMove(
  s: Statements,
  namespace: string,
  taskName: string,
  taskVersion: string,
  before: string | null,
  after: string | null,
): void {
  if (before === after) return;
  if (before !== null && COUNTED_STATUSES.has(before))
    s.counts.add(statusDelta(namespace, taskName, taskVersion, before, -1));
  if (after !== null && COUNTED_STATUSES.has(after))
    s.counts.add(statusDelta(namespace, taskName, taskVersion, after, 1));
}

function statusDelta(namespace: string, taskName: string, taskVersion: string, status: string, n: number): Delta {
  return {
    key: `${namespace}\u0000${taskName}\u0000${taskVersion}\u0000${status}`,
    namespace,
    taskName,
    taskVersion,
    status,
    n,
  };
}

const FINISHED: ReadonlySet<string> = new Set(['success', 'failed', 'cancelled']);

/** Adds a run's settle (a move from an unfinished status into a finished one at `at`) to its minute's count. */
export function countFinished(s: Statements, namespace: string, before: string, after: string, at: number): void {
  if (!FINISHED.has(after) || FINISHED.has(before)) return;
  const minute = at - (at % 60_000);
  s.counts.add({ key: `${namespace}\u0000${minute}`, namespace, minute, n: 1 });
}
