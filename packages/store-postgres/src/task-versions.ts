import type { Json } from '@docket/core';
import { type RunRecord, type RunRow, rowToRun, TaskVersions } from '@docket/core/store';
import type { Statement } from './wire/statement.js';

/** Runs one statement (on a transaction, a session or the pool) and answers its rows. */
export type Query = (statement: Statement) => Promise<readonly unknown[]>;

/** What a run row must hold for its version to be found: its task version and the four columns it may leave empty. */
export type VersionedRow = Pick<
  RunRow,
  'namespace' | 'task_name' | 'task_version' | 'definition_hash' | 'policy' | 'events' | 'recovery'
>;

/** A stored definition as `docket_definitions` answers it. */
interface DefinitionRow {
  namespace: string;
  name: string;
  version: string;
  hash: string;
  definition: string;
}

/**
 * The task versions of one PostgreSQL store (core's `TaskVersions`): a run row holds `''` in each of the four columns
 * its version decides while it equals the version's value. Reads are asynchronous here, so the definitions a row
 * needs are loaded first (`load`, one statement for the versions not known yet), and decoding stays synchronous.
 * A version becomes known when this process registers or loads its definition, both committed: definitions are never
 * changed or removed once stored, so a known version stays true.
 */
export class PgTaskVersions {
  private readonly stored = new Map<string, { hash: string; definition: Json }>();
  private readonly columns = new TaskVersions(
    (namespace, name, version) => this.stored.get(keyOf(namespace, name, version)) ?? null,
  );

  constructor(private readonly definitions: string) {}

  /** Keeps a definition this store wrote or read (committed): its version's runs are written narrow from now on. */
  remember(namespace: string, name: string, version: string, hash: string, definition: Json): void {
    this.stored.set(keyOf(namespace, name, version), { hash, definition });
  }

  /** Forgets every version (a store opened again may meet a schema rebuilt under it). */
  forget(): void {
    this.stored.clear();
    this.columns.forget();
  }

  /** Empties, in a full row about to be inserted, each version column that holds its version's value. */
  narrow(row: RunRow): RunRow {
    return this.columns.narrow(row);
  }

  /** Loads, in one statement, the definitions of the versions that `rows` leave columns to and that are not known. */
  async load(query: Query, rows: Iterable<VersionedRow>): Promise<void> {
    const missing = new Map<string, VersionedRow>();
    for (const row of rows) {
      if (!isNarrow(row)) continue;
      const key = keyOf(row.namespace, row.task_name, row.task_version);
      if (!this.stored.has(key)) missing.set(key, row);
    }
    if (missing.size === 0) return;
    const wanted = [...missing.values()];
    const found = (await query({
      text: `SELECT namespace, name, version, hash, definition FROM ${this.definitions}
        WHERE (namespace, name, version) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`,
      params: [wanted.map((r) => r.namespace), wanted.map((r) => r.task_name), wanted.map((r) => r.task_version)],
    })) as DefinitionRow[];
    for (const d of found) this.remember(d.namespace, d.name, d.version, d.hash, JSON.parse(d.definition) as Json);
  }

  /** Fills a loaded row's empty version columns (see `load`): the row as it was before it was narrowed. */
  widen<T extends VersionedRow>(row: T): T {
    return this.columns.widen(row as unknown as RunRow) as unknown as T;
  }

  /** The record of a loaded row (see `load`). */
  runOf(row: RunRow): RunRecord {
    return rowToRun(this.columns.widen(row));
  }

  /** The records of stored rows, their versions loaded first. */
  async runsOf(query: Query, rows: readonly RunRow[]): Promise<RunRecord[]> {
    await this.load(query, rows);
    return rows.map((row) => this.runOf(row));
  }
}

/** Whether a row leaves any of its four version columns to its version. */
function isNarrow(row: VersionedRow): boolean {
  return row.definition_hash === '' || row.policy === '' || row.events === '' || row.recovery === '';
}

const keyOf = (namespace: string, name: string, version: string) => `${namespace}\u0000${name}\u0000${version}`;
