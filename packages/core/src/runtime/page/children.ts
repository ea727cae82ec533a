import type { Reason, RunError, RunRecord, RunStatus } from '../../machine/run-types.js';
import type { NewChildRun } from '../../machine/run-write.js';
import type { ChildRecord } from '../../store/contract.js';
import { DocketError, isDocketError } from '../../util/errors.js';
import { deepFreeze, type Json } from '../../util/json.js';
import type { Engine } from '../queue/engine.js';
import { handleOf } from '../task/handles.js';
import { prepareStart } from '../task/start-input.js';

/** The most children one page may start. */
export const MAX_CHILDREN = 1000;

/** What a page's next page sees of each child it started (`ctx.children`), in the order they were given. */
export interface ChildOutcome {
  runId: string;
  task: { name: string; version: string };
  status: RunStatus;
  reason: Reason;
  /** The child's last committed state. */
  state: Json | null;
  error: RunError | null;
}

/** The children a `ctx.next` starts, ready for the commit: their runs and the parent's `childFailure`. */
export interface PreparedChildren {
  runs: NewChildRun[];
  childFailure: 'continue' | 'fail';
}

/** The keys a child entry may have: the rules of `start` for its task, plus `task`. */
const CHILD_KEYS = new Set(['task', 'query', 'idempotencyKey', 'priority', 'group']);

/**
 * Checks `ctx.next`'s `children` and `childFailure` and builds each child's run, as `start` would for its task, with
 * the parent and page recorded and `child:<parentRunId>:<page>:<index>` as the key of a child given none. Any fault
 * (no entry, more than 1000, a task of another queue, an input `start` would refuse, a key given twice) throws
 * `HANDLER_CONTRACT_INVALID`: the run then fails at once, and no child is created.
 */
export function prepareChildren(
  engine: Engine,
  parent: RunRecord,
  children: unknown,
  childFailure: unknown,
): PreparedChildren {
  if (childFailure !== undefined && childFailure !== 'continue' && childFailure !== 'fail') {
    throw contractError(parent, "childFailure must be 'continue' or 'fail'");
  }
  if (!Array.isArray(children) || children.length === 0 || children.length > MAX_CHILDREN) {
    throw contractError(parent, `children must be an array of 1..${MAX_CHILDREN} entries`);
  }
  const traceParent = engine.tracing.pageTraceParent(parent.runId);
  const keys = new Set<string>();
  const runs = children.map((entry: unknown, index) => {
    const child = prepareChild(engine, parent, entry, index, traceParent);
    const key = child.run.idempotencyKey as string;
    if (keys.has(`${child.run.taskName}\u0000${key}`)) {
      throw contractError(parent, `children[${index}]: idempotencyKey ${key} is given twice`);
    }
    keys.add(`${child.run.taskName}\u0000${key}`);
    return child;
  });
  return { runs, childFailure: childFailure ?? 'continue' };
}

/** One child entry checked and built (see `prepareChildren`). */
function prepareChild(
  engine: Engine,
  parent: RunRecord,
  entry: unknown,
  index: number,
  traceParent: string | null,
): NewChildRun {
  const where = `children[${index}]`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw contractError(parent, `${where} must be an object`);
  }
  const unknownKey = Object.keys(entry).find((key) => !CHILD_KEYS.has(key));
  if (unknownKey !== undefined) throw contractError(parent, `${where}.${unknownKey} is not a child option`);
  const { task, ...input } = entry as { task?: unknown };
  const handle = handleOf(task);
  if (handle === undefined || handle.engine !== engine) {
    throw contractError(parent, `${where}.task must be a task queue.define returned in this queue`);
  }
  try {
    const prepared = prepareStart(engine, handle.registered.definition, input, 'ctx.next', traceParent);
    // A derived key names this one child of this page, which commits once: no input is ever compared with it, so it
    // stores no input hash (as a start without a key), and costs no hashing.
    if (prepared.run.idempotencyKey === null) prepared.run.idempotencyKey = childKey(parent, index);
    prepared.run.parent = { runId: parent.runId, page: parent.page };
    return { run: prepared.run, history: prepared.history };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const code = isDocketError(error) ? ` (${error.code})` : '';
    throw contractError(parent, `${where}: ${message}${code}`);
  }
}

/** The idempotency key of a child given none: unique to its parent, page and place. */
export function childKey(parent: Pick<RunRecord, 'runId' | 'page'>, index: number): string {
  return `child:${parent.runId}:${parent.page}:${index}`;
}

function contractError(parent: RunRecord, message: string): DocketError {
  return new DocketError('HANDLER_CONTRACT_INVALID', message, { operation: 'ctx.next', runId: parent.runId });
}

/** Whether a claimed run's page is the one after a page that started children (it sees them as `ctx.children`). */
export function seesChildren(run: RunRecord): boolean {
  return run.children !== null && run.children.page === run.page - 1;
}

const NO_CHILDREN: readonly ChildOutcome[] = Object.freeze([]);

/** What `ctx.children` holds for a claimed run: its previous page's children, read from the store (frozen). */
export async function childrenOf(engine: Engine, run: RunRecord): Promise<readonly ChildOutcome[]> {
  if (!seesChildren(run)) return NO_CHILDREN;
  const page = (run.children as { page: number }).page;
  const rows = await engine.store.listChildren({ namespace: run.namespace, parentRunId: run.runId, page });
  return deepFreeze(rows.map(childOutcome));
}

/** One child as `ctx.children` shows it. */
export function childOutcome(run: ChildRecord): ChildOutcome {
  return {
    runId: run.runId,
    task: { name: run.taskName, version: run.taskVersion },
    status: run.status,
    reason: run.reason,
    state: run.state,
    error: run.error,
  };
}
