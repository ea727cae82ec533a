import { DocketError } from '../util/errors.js';
import { type ChildCounts, copyRun, isTerminal, type RunError, type RunParent, type RunRecord } from './run-types.js';
import { type NewChildRun, type RunWrite, transitionWrite } from './run-write.js';
import { awaitsChildren, type CancelReason, transition } from './state-machine.js';

/**
 * Whether applying `write` to `current` also writes other runs, in the same transaction: the children it creates,
 * the parent a settling child counts into, the unsettled children of a parent that ends. Cheap: every store asks it
 * of every write, and routes the few that answer yes through `followFamily` (or `followFamilySync`).
 */
export function touchesFamily(current: RunRecord, write: RunWrite): boolean {
  if (write.children !== undefined && write.children.length > 0) return true;
  if (isTerminal(current.status) || !isTerminal(write.run.status)) return false;
  return write.run.parent !== null || awaitsChildren(write.run);
}

/** What the family walk asks of the store, inside the transaction of the writes that began it. */
export type FamilyStep =
  /** Insert these children with their first history entries; a taken idempotency key fails the transaction. */
  | { kind: 'insert'; children: readonly NewChildRun[] }
  /** Count `by` settled children on their parent (see `CountedParent`); answer the parent after it, or `null`. */
  | { kind: 'count'; namespace: string; parentRunId: string; by: number; now: number }
  /** Read (and lock) one run: answer it, or `null`. */
  | { kind: 'read'; namespace: string; runId: string }
  /** Read (and lock) a parent's children that are not terminal, in id order: answer them. */
  | { kind: 'unsettled'; namespace: string; parentRunId: string }
  /** Apply one conditional write to a row read in this transaction (no family walk of its own). */
  | { kind: 'write'; current: RunRecord; write: RunWrite };

/**
 * The count step, as data a store applies in one statement: on the parent's row, if it has children (`children` not
 * NULL), raise `children.settled` by `by`, never above `children.total`, and set `updatedAt` to `now`, nothing else
 * (no revision, no history: the counter is not a transition). The store answers the parent's status and counts after
 * it, or `null` when it counted nothing (no such parent, no children, or every child already counted). It is the only
 * write of a parent that no plan decides on its row, and it happens only while the parent holds no lease (its
 * children run; a parent is claimed again only once they all settled).
 */
export interface CountedParent {
  status: RunRecord['status'];
  children: ChildCounts;
}

/** One applied run write: the row before it, and the write. */
export interface AppliedWrite {
  current: RunRecord;
  write: RunWrite;
}

/**
 * The writes some applied writes lead to, as steps the store answers one by one, in waves. For each write of a wave:
 * its children inserted; if it settles children, their parents counted, each parent once for all of its children of
 * the wave (O(parents), whatever the number of children), and a parent woken `CHILDREN_SETTLED` by its last child or
 * failed `CHILD_FAILED` under `childFailure: 'fail'`; if it ends a parent whose children are unsettled, each of them
 * cancelled (`PARENT_CANCELLED`, or `PARENT_FAILED` when the parent failed). The writes a wave makes are the next
 * wave, so a cancel reaches grandchildren and a failing parent its own parent. Pure: every read comes from the store.
 */
export function* familySteps(applied: readonly AppliedWrite[]): Generator<FamilyStep, void, unknown> {
  let wave: readonly AppliedWrite[] = applied;
  while (wave.length > 0) {
    const next: AppliedWrite[] = [];
    for (const { write } of wave) {
      if (write.children !== undefined && write.children.length > 0) yield { kind: 'insert', children: write.children };
    }
    const ended = wave.filter(({ current, write }) => !isTerminal(current.status) && isTerminal(write.run.status));
    yield* countParents(ended, next);
    for (const { write } of ended) {
      if (awaitsChildren(write.run)) yield* cancelChildren(write, next);
    }
    wave = next;
  }
}

/** The count steps of the children a wave settled, one per parent, and each parent's move it calls for, into `next`. */
function* countParents(ended: readonly AppliedWrite[], next: AppliedWrite[]): Generator<FamilyStep, void, unknown> {
  const byParent = new Map<string, RunWrite[]>();
  for (const { write } of ended) {
    const run = write.run;
    // A child retried by an operator after it settled was counted then: its parent counts each child once.
    if (run.parent === null || run.retries !== 0) continue;
    const key = `${run.namespace}\u0000${run.parent.runId}`;
    const children = byParent.get(key) ?? [];
    byParent.set(key, children);
    children.push(write);
  }
  for (const children of byParent.values()) {
    const first = (children[0] as RunWrite).run;
    const namespace = first.namespace;
    const parentRunId = (first.parent as RunParent).runId;
    const now = first.updatedAt;
    const by = children.length;
    const counted = (yield { kind: 'count', namespace, parentRunId, by, now }) as CountedParent | null;
    const mover = counted === null ? undefined : children.find((child) => parentMoves(counted, child.run));
    if (mover === undefined) continue;
    const parent = (yield { kind: 'read', namespace, runId: parentRunId }) as RunRecord | null;
    const actor = mover.history.at(-1)?.actor ?? 'docket';
    const moved = parent === null ? null : planParentMove(parent, mover.run, actor, now);
    if (parent === null || moved === null) continue;
    yield { kind: 'write', current: parent, write: moved };
    next.push({ current: parent, write: moved });
  }
}

/** The cancel of each unsettled child of a parent that ended, into `next`. */
function* cancelChildren(ended: RunWrite, next: AppliedWrite[]): Generator<FamilyStep, void, unknown> {
  const run = ended.run;
  const actor = ended.history.at(-1)?.actor ?? 'docket';
  const reason: CancelReason = run.status === 'failed' ? 'PARENT_FAILED' : 'PARENT_CANCELLED';
  const unsettled = (yield { kind: 'unsettled', namespace: run.namespace, parentRunId: run.runId }) as RunRecord[];
  for (const child of unsettled) {
    const detail = { parentRunId: run.runId };
    const cancelled = transition(child, { type: 'cancel', actor, reason, detail }, run.updatedAt);
    if (!cancelled.ok) continue;
    const cancel = transitionWrite(cancelled);
    yield { kind: 'write', current: child, write: cancel };
    next.push({ current: child, write: cancel });
  }
}

/** Whether a parent just counted a settled `child` must move: its last child settled, or one failed under `'fail'`. */
function parentMoves(parent: CountedParent, child: RunRecord): boolean {
  if (failsParent(parent.children, child)) return parent.status === 'waiting' || parent.status === 'paused';
  return parent.status === 'waiting' && parent.children.settled >= parent.children.total;
}

/** Whether `child`, settled, fails a parent with these counts (`childFailure: 'fail'`, a child of its latest page). */
function failsParent(counts: ChildCounts, child: RunRecord): boolean {
  return child.status !== 'success' && counts.childFailure === 'fail' && child.parent?.page === counts.page;
}

/**
 * The move of a parent that counted a settled child (its counter already raised): `failed` / `CHILD_FAILED` for a
 * child that ended `failed` or `cancelled` under `childFailure: 'fail'`, or `pending` / `CHILDREN_SETTLED` once every
 * child settled; `null` when neither applies to the parent as it is.
 */
export function planParentMove(parent: RunRecord, child: RunRecord, actor: string, now: number): RunWrite | null {
  const counts = parent.children;
  if (counts === null) return null;
  const detail = { childRunId: child.runId, status: child.status, reason: child.reason };
  if (failsParent(counts, child)) {
    const error: RunError = {
      code: 'CHILD_FAILED',
      name: 'ChildFailed',
      message: `child run ${child.runId} ended ${child.status} (${child.reason})`,
      truncated: false,
    };
    const failed = transition(parent, { type: 'child_failed', actor, error, detail }, now);
    if (failed.ok) return transitionWrite(failed);
  }
  if (parent.status !== 'waiting' || awaitsChildren(parent)) return null;
  const woken = transition(parent, { type: 'children_settled', actor, detail: { children: counts.total } }, now);
  return woken.ok ? transitionWrite(woken) : null;
}

/** The count step applied to a parent's record (for a store that keeps records, the memory store), or `null`. */
export function countChildren(parent: RunRecord, by: number, now: number): RunRecord | null {
  const counts = parent.children;
  if (counts === null || counts.settled >= counts.total) return null;
  const counted = copyRun(parent);
  counted.children = { ...counts, settled: Math.min(counts.total, counts.settled + by) };
  counted.updatedAt = now;
  return counted;
}

/** How a synchronous store answers the family walk's steps (memory, SQLite). */
export interface FamilyIo {
  /** The `count` step: counts `by` settled children on the parent (`CountedParent`), or answers `null`. */
  count(namespace: string, parentRunId: string, by: number, now: number): CountedParent | null;
  /** The `read` step: one run, read (and locked) in the open transaction, or `null`. */
  read(namespace: string, runId: string): RunRecord | null;
  /** The `unsettled` step: a parent's children that are not terminal, in id order. */
  unsettled(namespace: string, parentRunId: string): RunRecord[];
  /** The `write` step: one conditional write of a row read in this transaction. */
  write(current: RunRecord, write: RunWrite): void;
  /** The `insert` step: children with their first history entries (a taken key throws `IDEMPOTENCY_CONFLICT`). */
  insert(children: readonly NewChildRun[]): void;
}

/** How an asynchronous store answers the family walk's steps (PostgreSQL). */
export type AsyncFamilyIo = {
  [K in keyof FamilyIo]: (...args: Parameters<FamilyIo[K]>) => Promise<ReturnType<FamilyIo[K]>>;
};

/** Walks `familySteps` from applied writes with a synchronous store. */
export function followFamilySync(applied: readonly AppliedWrite[], io: FamilyIo): void {
  const steps = familySteps(applied);
  let answer: unknown;
  for (let step = steps.next(); !step.done; step = steps.next(answer)) {
    answer = answerStep(step.value, io);
  }
}

/** Walks `familySteps` from applied writes with an asynchronous store. */
export async function followFamily(applied: readonly AppliedWrite[], io: AsyncFamilyIo): Promise<void> {
  const steps = familySteps(applied);
  let answer: unknown;
  for (let step = steps.next(); !step.done; step = steps.next(answer)) {
    answer = await answerStep(step.value, io);
  }
}

function answerStep(step: FamilyStep, io: FamilyIo | AsyncFamilyIo): unknown {
  switch (step.kind) {
    case 'insert':
      return io.insert(step.children);
    case 'count':
      return io.count(step.namespace, step.parentRunId, step.by, step.now);
    case 'read':
      return io.read(step.namespace, step.runId);
    case 'unsettled':
      return io.unsettled(step.namespace, step.parentRunId);
    case 'write':
      return io.write(step.current, step.write);
  }
}

/** The error a page's commit fails with when one of its children's idempotency keys already names a run. */
export function childKeyTaken(child: RunRecord): DocketError {
  return new DocketError('IDEMPOTENCY_CONFLICT', "a child's idempotency key already names a run", {
    operation: 'ctx.next',
    ...(child.idempotencyKey === null ? {} : { idempotencyKey: child.idempotencyKey }),
    ...(child.parent === null ? {} : { runId: child.parent.runId }),
  });
}
