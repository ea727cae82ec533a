import {
  EMPTY_SCOPE,
  type FlowClaimPlan,
  type FlowScopeState,
  firstInTurn,
  type GroupTurn,
  groupsFoundEmpty,
  type ListedGroup,
  type SelectRequest,
  type TaskFlowState,
} from '@docket/core/store';
import type { PgContext } from '../../context.js';
import type { Statement } from '../../wire/statement.js';
import {
  type FlowReads,
  groupListStatement,
  groupTurnStatements,
  groupTurnsOf,
  taskScopeOf,
  taskScopeStatement,
} from './flow-statements.js';

/** A flow-controlled task as one claim takes it: the versions asked for, and what was read under its lock. */
export interface LockedTask {
  name: string;
  versions: readonly string[];
  state: TaskFlowState;
  scope: FlowScopeState;
  turns: GroupTurn[];
  /** Whether the groups came from the list kept since an earlier claim (see `GroupLists`). */
  keptGroups: boolean;
  /** The seat of a claim that shares the task's flow lock (-1: no seat was free), none for a claim alone. */
  seat?: number;
}

/** Reads statements in the claim's transaction and answers their rows, in order. */
export type Read = (statements: readonly Statement[]) => Promise<unknown[][]>;

/**
 * The statements that read a task's scope (when `reads.task`) and, when `reads.groups`, the turns of the groups kept
 * from an earlier listing while it is fresh, else the listing itself; and how their rows make the locked task
 * (reading the turns of the groups just listed, which it keeps, with `read`).
 */
export function scopeReads(
  ctx: PgContext,
  request: SelectRequest,
  name: string,
  versions: readonly string[],
  reads: FlowReads,
) {
  const { namespace, now } = request;
  // From the kept list, the scopes of only the groups a claim of `request.limit` runs may come to.
  const keptList = reads.groups ? ctx.groupLists.kept(namespace, name, now) : undefined;
  const kept = keptList && firstInTurn(keptList, request.limit);
  const turnsOf = (groups: readonly ListedGroup[]) =>
    groupTurnStatements(
      ctx.tables,
      namespace,
      name,
      reads.groupAfter,
      groups.map((group) => group.group_key),
    );
  const statements = reads.task ? [taskScopeStatement(ctx.tables, namespace, name, reads.taskAfter)] : [];
  if (kept !== undefined) statements.push(...turnsOf(kept));
  else if (reads.groups) statements.push(groupListStatement(ctx.tables, namespace, name));
  const locked = async (state: TaskFlowState, rows: unknown[][], read: Read): Promise<LockedTask> => {
    const scope = state.paused || !reads.task ? EMPTY_SCOPE : taskScopeOf(rows[0] ?? []);
    const rest = reads.task ? rows.slice(1) : rows;
    let turns: GroupTurn[] = [];
    if (kept !== undefined) turns = groupTurnsOf(kept, rest);
    else if (reads.groups) {
      // Listed, every group's turn is read once, and the list is kept with their last claims: the claims that use
      // the kept list read only the first groups in turn by it.
      const groups = (rest[0] ?? []) as ListedGroup[];
      turns = groupTurnsOf(groups, await read(turnsOf(groups)));
      const listed = turns.map((turn) => ({
        group_key: turn.group,
        last_claimed_at: turn.lastClaimedAt,
        head_run_id: turn.head ?? null,
      }));
      ctx.groupLists.keep(namespace, name, now, listed);
    }
    return { name, versions, state, scope, turns, keptGroups: kept !== undefined };
  };
  return { statements, locked };
}

/**
 * Updates the kept groups after a claim at `request.now` of at most `limit` read `rows`: the groups it took from are
 * claimed at that time (the order of the next claims); a group read without a due run is left out until the groups
 * are listed again, and a claim from the kept list that came back short lists them again next time (a group may have
 * got due runs since). The statement reads the groups in turn until the claim is full, so a group after the last one
 * it took from may not have been read.
 */
export function noteGroups(
  ctx: PgContext,
  request: Pick<SelectRequest, 'namespace' | 'now'>,
  task: LockedTask,
  plan: FlowClaimPlan,
  rows: readonly { group_key: string }[],
  limit: number,
): void {
  const { namespace } = request;
  if (task.keptGroups && rows.length < limit) ctx.groupLists.forget(namespace, task.name);
  if (plan.mode !== 'groups') return;
  const found = new Set(rows.map((row) => row.group_key));
  ctx.groupLists.touched(namespace, task.name, [...found], request.now);
  for (const group of groupsFoundEmpty(plan.groups, found, rows.length >= plan.take)) {
    ctx.groupLists.drop(namespace, task.name, group);
  }
}
