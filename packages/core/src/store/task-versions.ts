/**
 * The values every run of a task version copies from its definition (definition hash, retry policy, callback kinds,
 * recovery mode), kept once per version: a SQL store writes each of those run columns as `''` when it holds the
 * version's value, and reads it back from the version's stored definition.
 */
import type { RunRecord } from '../machine/run-types.js';
import type { Json } from '../util/json.js';
import { type RunRow, sharedJsonText } from './run-row.js';

/** The four run columns a task version decides, as a row holds them (each `''` where it leaves it to the version). */
export interface VersionValues {
  definition_hash: string;
  policy: string;
  events: string;
  recovery: string;
}

/** A stored definition as a store reads it from its definitions table, or `null` when none is stored. */
export type LoadDefinition = (
  namespace: string,
  name: string,
  version: string,
) => { hash: string; definition: Json } | null;

/**
 * The task versions of one store, each loaded once from its stored definition (definitions never change once
 * stored: another hash under the same identity is `DEFINITION_HASH_CONFLICT`). A version with no stored definition
 * is looked up again each time, and its runs are written in full.
 */
export class TaskVersions {
  private readonly known = new Map<string, VersionValues>();

  constructor(private readonly load: LoadDefinition) {}

  /** The version's columns, or `undefined` when no definition of it is stored. */
  private columnsOf(namespace: string, name: string, version: string): VersionValues | undefined {
    const key = `${namespace}\u0000${name}\u0000${version}`;
    let columns = this.known.get(key);
    if (columns === undefined) {
      const stored = this.load(namespace, name, version);
      if (stored === null) return undefined;
      columns = columnsOfDefinition(stored.hash, stored.definition);
      this.known.set(key, columns);
    }
    return columns;
  }

  /**
   * Forgets every version loaded: for a store whose transaction rolled back, in which a definition read (one written
   * earlier in that transaction) may have been undone.
   */
  forget(): void {
    this.known.clear();
  }

  /** Empties, in a full row about to be inserted, each version column that holds its version's value. */
  narrow(row: RunRow): RunRow {
    const v = this.columnsOf(row.namespace, row.task_name, row.task_version);
    if (v !== undefined) emptyWhereEqual(row, v);
    return row;
  }

  /** A run's four version columns as its row holds them: each `''` where it equals its version's value. */
  versionValues(run: RunRecord): VersionValues {
    const values: VersionValues = {
      definition_hash: run.definitionHash,
      policy: sharedJsonText(run.policy),
      events: sharedJsonText(run.events),
      recovery: run.recovery,
    };
    const v = this.columnsOf(run.namespace, run.taskName, run.taskVersion);
    if (v !== undefined) emptyWhereEqual(values, v);
    return values;
  }

  /** Empties, in the columns an update changes (core's `runChanges`) of `run`'s row, those that hold its version's. */
  narrowChanges(run: Pick<RunRecord, 'namespace' | 'taskName' | 'taskVersion'>, changes: Partial<RunRow>): void {
    if (
      changes.definition_hash === undefined &&
      changes.policy === undefined &&
      changes.events === undefined &&
      changes.recovery === undefined
    ) {
      return;
    }
    const v = this.columnsOf(run.namespace, run.taskName, run.taskVersion);
    if (v !== undefined) emptyWhereEqual(changes, v);
  }

  /** Fills, in a stored row, each empty version column with its version's value (the row as `narrow` found it). */
  widen(row: RunRow): RunRow {
    if (row.definition_hash !== '' && row.policy !== '' && row.events !== '' && row.recovery !== '') return row;
    const v = this.columnsOf(row.namespace, row.task_name, row.task_version);
    if (v === undefined) {
      throw new Error(
        `internal: run ${row.run_id} keeps its version's values, but no definition of ${row.task_name}@${row.task_version} is stored`,
      );
    }
    if (row.definition_hash === '') row.definition_hash = v.definition_hash;
    if (row.policy === '') row.policy = v.policy;
    if (row.events === '') row.events = v.events;
    if (row.recovery === '') row.recovery = v.recovery;
    return row;
  }
}

/** Empties each of the four columns of `columns` (a whole row, or an update's changes) that holds `v`'s value. */
function emptyWhereEqual(columns: Partial<VersionValues>, v: VersionValues): void {
  if (columns.definition_hash === v.definition_hash) columns.definition_hash = '';
  if (columns.policy === v.policy) columns.policy = '';
  if (columns.events === v.events) columns.events = '';
  if (columns.recovery === v.recovery) columns.recovery = '';
}

/** A stored canonical definition's version columns, encoded as `runParams` encodes a run's. */
function columnsOfDefinition(hash: string, definition: Json): VersionValues {
  const d = definition as { policy: Json; events: Json; recovery: string };
  return {
    definition_hash: hash,
    policy: JSON.stringify(d.policy),
    events: JSON.stringify(d.events),
    recovery: d.recovery,
  };
}
