import { DocketError } from '../util/errors.js';
import { copyRun, isTerminal, type RunError, type RunRecord } from './run-types.js';
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

/** What the family walk asks of the store, inside the transaction of the write that began it. */
export type FamilyStep =
  /** Insert these children with their first history entries; a taken idempotency key fails the transaction. */
  | { kind: 'insert'; children: readonly NewChildRun[] }
  /** Read (and lock) one run: answer it, or `null`. */
  | { kind: 'read'; namespace: string; runId: string }
  /** Read (and lock) a parent's children that are not terminal, in id order: answer them. */
  | { kind: 'unsettled'; namespace: string; parentRunId: string }
  /** Apply one conditional write to a row read in this transaction (no family walk of its own). */
  | { kind: 'write'; current: RunRecord; write: RunWrite };

/**
 * The writes a family write leads to, as steps the store answers one by one. From the write it was given: its
 * children inserted; if it settles a child, the parent counted (and woken `CHILDREN_SETTLED` by its last child, or
 * failed `CHILD_FAILED` under `childFailure: 'fail'`); if it ends a parent whose children are unsettled, each of them
 * cancelled (`PARENT_CANCELLED`, or `PARENT_FAILED` when the parent failed). Each write it makes is followed the same
 * way, so a cancel reaches grandchildren and a failing parent its own parent. Pure: every read comes from the store.
 */
export function* familySteps(current: RunRecord, write: RunWrite): Generator<FamilyStep, void, unknown> {
  const moves: { before: RunRecord; write: RunWrite }[] = [{ before: current, write }];
  for (let i = 0; i < moves.length; i++) {
    const move = moves[i] as { before: RunRecord; write: RunWrite };
    const run = move.write.run;
    const children = move.write.children;
    if (children !== undefined && children.length > 0) yield { kind: 'insert', children };
    if (isTerminal(move.before.status) || !isTerminal(run.status)) continue;
    const now = run.updatedAt;
    const actor = move.write.history.at(-1)?.actor ?? 'docket';
    // A child retried by an operator after it settled was counted then: its parent counts each child once.
    if (run.parent !== null && run.retries === 0) {
      const parent = (yield { kind: 'read', namespace: run.namespace, runId: run.parent.runId }) as RunRecord | null;
      const counted = parent === null ? null : planChildSettled(parent, run, actor, now);
      if (parent !== null && counted !== null) {
        yield { kind: 'write', current: parent, write: counted };
        moves.push({ before: parent, write: counted });
      }
    }
    if (!awaitsChildren(run)) continue;
    const reason: CancelReason = run.status === 'failed' ? 'PARENT_FAILED' : 'PARENT_CANCELLED';
    const unsettled = (yield { kind: 'unsettled', namespace: run.namespace, parentRunId: run.runId }) as RunRecord[];
    for (const child of unsettled) {
      const cancelled = transition(child, { type: 'cancel', actor, reason, detail: { parentRunId: run.runId } }, now);
      if (!cancelled.ok) continue;
      const cancel = transitionWrite(cancelled);
      yield { kind: 'write', current: child, write: cancel };
      moves.push({ before: child, write: cancel });
    }
  }
}

/**
 * A child's first settle, counted on its parent: the counter raised (a write with no history), and with it the
 * parent's move when there is one: `failed` / `CHILD_FAILED` for a child that ended `failed` or `cancelled` under
 * `childFailure: 'fail'`, or `pending` / `CHILDREN_SETTLED` for the last child. `null` when the parent counts none.
 */
export function planChildSettled(parent: RunRecord, child: RunRecord, actor: string, now: number): RunWrite | null {
  const counts = parent.children;
  if (counts === null || counts.settled >= counts.total) return null;
  const counted = copyRun(parent);
  counted.children = { ...counts, settled: counts.settled + 1 };
  counted.updatedAt = now;
  const detail = { childRunId: child.runId, status: child.status, reason: child.reason };
  const ofLatest = child.parent?.page === counts.page;
  if (child.status !== 'success' && counts.childFailure === 'fail' && ofLatest) {
    const error: RunError = {
      code: 'CHILD_FAILED',
      name: 'ChildFailed',
      message: `child run ${child.runId} ended ${child.status} (${child.reason})`,
      truncated: false,
    };
    const failed = transition(counted, { type: 'child_failed', actor, error, detail }, now);
    if (failed.ok) return transitionWrite(failed);
  }
  if (parent.status === 'waiting' && !awaitsChildren(counted)) {
    const woken = transition(counted, { type: 'children_settled', actor, detail: { children: counts.total } }, now);
    if (woken.ok) return transitionWrite(woken);
  }
  return { run: counted, history: [], events: [] };
}

/** How a synchronous store answers the family walk's steps (memory, SQLite). */
export interface FamilyIo {
  read(namespace: string, runId: string): RunRecord | null;
  unsettled(namespace: string, parentRunId: string): RunRecord[];
  write(current: RunRecord, write: RunWrite): void;
  insert(children: readonly NewChildRun[]): void;
}

/** How an asynchronous store answers the family walk's steps (PostgreSQL). */
export type AsyncFamilyIo = {
  [K in keyof FamilyIo]: (...args: Parameters<FamilyIo[K]>) => Promise<ReturnType<FamilyIo[K]>>;
};

/** Walks `familySteps` from one applied write with a synchronous store. */
export function followFamilySync(current: RunRecord, write: RunWrite, io: FamilyIo): void {
  const steps = familySteps(current, write);
  let answer: unknown;
  for (let step = steps.next(); !step.done; step = steps.next(answer)) {
    answer = answerStep(step.value, io);
  }
}

/** Walks `familySteps` from one applied write with an asynchronous store. */
export async function followFamily(current: RunRecord, write: RunWrite, io: AsyncFamilyIo): Promise<void> {
  const steps = familySteps(current, write);
  let answer: unknown;
  for (let step = steps.next(); !step.done; step = steps.next(answer)) {
    answer = await answerStep(step.value, io);
  }
}

function answerStep(step: FamilyStep, io: FamilyIo | AsyncFamilyIo): unknown {
  switch (step.kind) {
    case 'insert':
      return io.insert(step.children);
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
