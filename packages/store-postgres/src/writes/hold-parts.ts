import type { FlowHold } from '@docket/core/store';
import type { Params } from '../wire/statement.js';
import type { PendingWrite, Tables } from './run-writes.js';

/**
 * The statement parts (CTEs) that store the holds of a batch of run writes, each only if its run's write landed (in
 * `u`, the CTE of the rows updated): the task's hold, or its group's and the task's latest group hold.
 */
export function holdParts(tables: Tables, params: Params, writes: readonly PendingWrite[]): string[] {
  const parts: string[] = [];
  for (const { write } of writes) {
    const hold: FlowHold | undefined = write.hold;
    if (hold === undefined) continue;
    const n = parts.length;
    const run = write.run;
    const ns = params.add(run.namespace, 'text');
    const task = params.add(run.taskName, 'text');
    const until = params.add(hold.until, 'double precision');
    const landed = `EXISTS (SELECT 1 FROM u WHERE run_id = ${params.add(run.runId, 'text')})`;
    const column = hold.scope === 'task' ? 'hold_until' : 'group_hold_until';
    parts.push(`h${n} AS (UPDATE ${tables.tasks} SET ${column} = GREATEST(COALESCE(${column}, 0), ${until})
        WHERE namespace = ${ns} AND name = ${task} AND ${landed})`);
    if (hold.scope === 'group') {
      parts.push(`h${n}g AS (INSERT INTO ${tables.flowGroups} AS g (namespace, task_name, group_key, hold_until)
          SELECT ${ns}, ${task}, ${params.add(hold.group, 'text')}, ${until} WHERE ${landed}
          ON CONFLICT (namespace, task_name, group_key)
          DO UPDATE SET hold_until = GREATEST(COALESCE(g.hold_until, 0), excluded.hold_until))`);
    }
  }
  return parts;
}
