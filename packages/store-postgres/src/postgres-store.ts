import { type CallbackCounts, DocketError, type Json, type Store, type StoreCapabilities } from '@docket/core';
import {
  type CallbackEventRecord,
  type CommandPlan,
  type CommandRequest,
  type CreateRunResult,
  checkEventWrite,
  EVENT_COLUMNS,
  type EventPlan,
  type EventRow,
  eventParams,
  type HistoryRow,
  type PlainClaim,
  type PlanResult,
  type RunRecord,
  type RunRow,
  type RunWrite,
  rowToEvent,
  rowToHistory,
  rowToRun,
  type SelectRequest,
  type TransactOptions,
  type TransactPlan,
} from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { startBatcher, type Transaction, transactBatcher } from './batches.js';
import { classify, OutcomeTracker } from './errors.js';
import { HeldClaims, type HeldGroup } from './held-claims.js';
import { notifyText, type PreparedCall, preparedCall } from './inline.js';
import { KnownRuns } from './known-runs.js';
import { applyMigrations } from './migrations.js';
import {
  isPlainClaim,
  type PlainClaimResult,
  type PlainClaimRow,
  plainClaimStatement,
  planPlainClaims,
  RUN_COLUMNS,
  SharedColumns,
} from './plain-claim.js';
import {
  applyLockedWrites,
  type Executor,
  insertRuns,
  type PendingWrite,
  rowsOf,
  runWritesStatement,
  type Tables,
  wakeNamespaces,
} from './run-writes.js';
import {
  BEGIN,
  compose,
  type Send,
  type Session,
  sendParts,
  UNFLUSHED_COMMIT,
  writeRowsInOneMessage,
} from './session.js';
import type { Statement } from './statement.js';

/** The drizzle transaction an effect or a commit-time check receives: writes on it commit with the transition. */
// biome-ignore lint/suspicious/noExplicitAny: the transaction type depends on the driver (node-postgres or PGlite).
export type PostgresTransaction = PgTransaction<PgQueryResultHKT, any, any>;

/** Something that can be LISTENed on: a node-postgres pool (a dedicated client) or a PGlite instance. */
export interface Listener {
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
}

/** What `postgresStore` needs from a driver: a drizzle database and a way to listen. */
export interface PostgresConnection {
  // biome-ignore lint/suspicious/noExplicitAny: any drizzle PG database (node-postgres or PGlite).
  db: PgDatabase<PgQueryResultHKT, any>;
  listener: Listener | null;
  /**
   * Optional: runs work on one pooled connection that sends statements as text, several per round trip, calling
   * statements prepared once per connection (see `session.ts`). node-postgres has it; with PGlite (one in-process
   * connection) the store uses drizzle transactions throughout.
   */
  session?: Session;
  close(): Promise<void>;
}

/** The PostgreSQL `Store`. */
export interface PostgresStore extends Store<PostgresTransaction> {
  /** The schema the tables live in. */
  readonly schema: string;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/** Creates the store on a connection made by `connect` (see `index.ts` for `connectionString`, `pool`, `pglite`). */
export function createPostgresStore(
  connect: () => Promise<PostgresConnection>,
  schema = 'docket',
  { holdClaims = true }: { holdClaims?: boolean } = {},
): PostgresStore {
  if (!SCHEMA.test(schema)) {
    throw new DocketError('CONFIG_INVALID', 'schema must be a lowercase SQL identifier', {
      operation: 'postgresStore',
      details: { path: 'schema' },
    });
  }
  const capabilities: StoreCapabilities = { asyncTransactions: true, multiProcess: true };
  const name = (table: string) => `"${schema}"."${table}"`;
  const q = (table: string) => sql.raw(name(table));
  const RUNS = q('docket_runs');
  const HISTORY = q('docket_history');
  const EVENTS = q('docket_events');
  const DEFINITIONS = q('docket_definitions');
  const COMMANDS = q('docket_commands');
  const channel = `docket_${schema}`;
  let connection: PostgresConnection | null = null;
  let opens = 0;

  const live = () => {
    if (!connection) {
      throw new DocketError('CONNECTION_UNAVAILABLE', 'the PostgreSQL store is not open: call queue.ready() first', {
        operation: 'store',
      });
    }
    return connection.db;
  };

  const rows = rowsOf;
  const tables: Tables = {
    runs: name('docket_runs'),
    history: name('docket_history'),
    events: name('docket_events'),
    channel,
  };
  const applyWrite = (tx: Executor, current: RunRecord, write: RunWrite) =>
    applyLockedWrites(tx, tables, [{ current, write }]);
  const known = new KnownRuns();
  const sharedColumns = new SharedColumns();
  const held = new HeldClaims();

  async function writeEvent(tx: Executor, current: CallbackEventRecord, next: CallbackEventRecord) {
    checkEventWrite(current, next);
    const row = eventParams(next) as unknown as Record<string, unknown>;
    const sets = sql.join(
      EVENT_COLUMNS.filter((c) => c !== 'event_id').map((c) => sql`${sql.raw(`"${c}"`)} = ${row[c] ?? null}`),
      sql`, `,
    );
    const updated = await rows(
      tx,
      sql`UPDATE ${EVENTS} SET ${sets} WHERE event_id = ${current.eventId} AND revision = ${current.revision} RETURNING event_id`,
    );
    if (updated.length !== 1) throw new Error(`internal: event ${current.eventId} moved during its transaction`);
    if (next.status === 'pending' || next.status === 'retrying') {
      await tx.execute(sql`SELECT pg_notify(${channel}, ${next.namespace})`);
    }
  }

  /** Runs `work` in one transaction; maps driver errors, and a lost connection while committing to OUTCOME_UNKNOWN. */
  async function inTransaction<T>(
    operation: string,
    work: (tx: PostgresTransaction) => Promise<T>,
    context: { runId?: string; idempotencyKey?: string } = {},
  ): Promise<T> {
    const outcome = new OutcomeTracker();
    try {
      return await transaction(outcome, work);
    } catch (error) {
      throw classify(error, outcome, operation, context);
    }
  }

  /** One transaction on a pooled connection, with `outcome` marking the moment COMMIT is sent. */
  const transaction: Transaction = (outcome, work) => {
    const db = live();
    return db.transaction(async (tx) => {
      const value = await work(tx as PostgresTransaction);
      outcome.committing();
      return value;
    });
  };
  const startGrouped = startBatcher(tables, transaction, () => connection?.session, live);
  const transactGrouped = transactBatcher(tables, transaction, known, () => connection?.session);

  /** The statements that select (and lock) a claim's candidates: one per task, or the expired leases. */
  function candidateQueries(request: SelectRequest, expired: boolean): Statement[] {
    if (expired) {
      return [
        {
          text: `SELECT ${RUN_COLUMNS} FROM ${tables.runs} WHERE namespace = $1 AND lease_expires_at IS NOT NULL
            AND lease_expires_at <= $2 ORDER BY lease_expires_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
          params: [request.namespace, request.now, request.limit],
        },
      ];
    }
    return request.tasks.map((task) => ({
      text: `SELECT ${RUN_COLUMNS} FROM ${tables.runs} WHERE namespace = $1 AND task_name = $2 AND task_version = $3
            AND claim_due_at IS NOT NULL AND claim_due_at <= $4 ORDER BY claim_due_at LIMIT $5 FOR UPDATE SKIP LOCKED`,
      params: [request.namespace, task.name, task.version, request.now, request.limit],
    }));
  }

  /** Core's plan for each candidate, up to the request's limit. */
  function planCandidates(request: SelectRequest, candidates: RunRow[]): PendingWrite[] {
    const writes: PendingWrite[] = [];
    for (const row of candidates) {
      if (writes.length >= request.limit) break;
      const current = rowToRun(row);
      const write = request.plan(current);
      if (write !== null) writes.push({ current, write });
    }
    return writes;
  }

  async function selectAndApply(request: SelectRequest, expired: boolean): Promise<RunRecord[]> {
    const session = connection?.session;
    const written =
      session === undefined
        ? await inTransaction('store.claimDue', async (tx) => {
            let claimed: RunRecord[] = [];
            let ordinary = request;
            const claim = expired ? undefined : plainClaimOf(request);
            if (claim !== undefined) {
              const shared = sharedColumns.expected(request);
              const plain = planPlainClaims(
                request,
                claim,
                await rows<PlainClaimRow>(tx, plainClaimStatement(tables, request, claim, shared)),
                shared,
                sharedColumns,
              );
              claimed = plain.claimed.map((w) => w.run);
              if (plain.leftover === 0 || claimed.length >= request.limit) return claimed;
              // The rows it left stay locked by this transaction: the ordinary selects below take them again.
              ordinary = { ...request, limit: request.limit - claimed.length };
            }
            const candidates: RunRow[] = [];
            for (const query of candidateQueries(ordinary, expired))
              candidates.push(...(await rows<RunRow>(tx, query)));
            const writes = planCandidates(ordinary, candidates);
            await applyLockedWrites(tx, tables, writes);
            return [...claimed, ...writes.map((w) => w.write.run)];
          })
        : await claimInSession(session, request, expired);
    for (const run of written) known.committed(run);
    return written;
  }

  /** The request's plain claim, when the one-statement claim can apply it (see `plain-claim.ts`). */
  function plainClaimOf(request: SelectRequest): PlainClaim | undefined {
    return request.tasks.length > 0 ? request.plainClaim : undefined;
  }

  /**
   * The plain claim in one round trip: `BEGIN`, the statement, `COMMIT` without waiting for the flush (a claim writes
   * no callback event and leaves nothing claimable, as in `selectAndPlan`).
   */
  async function claimPlain(session: Session, request: SelectRequest, claim: PlainClaim): Promise<PlainClaimResult> {
    const shared = sharedColumns.expected(request);
    const call = preparedCall(plainClaimStatement(tables, request, claim, shared));
    const outcome = new OutcomeTracker();
    outcome.committing();
    try {
      const rows = (await writeRowsInOneMessage(session, call, [], [...BEGIN, UNFLUSHED_COMMIT])) as PlainClaimRow[];
      return planPlainClaims(request, claim, rows, shared, sharedColumns);
    } catch (error) {
      throw classify(error, outcome, 'store.claimDue', {});
    }
  }

  /**
   * The plain claim with its transaction held open (see `held-claims.ts`): `BEGIN` and the locking select in one round
   * trip, core's plans, then the runs are handed out while the transaction stays open until the end of this turn of
   * the event loop; the pages whose pure commit plans arrive by then are written with their claims, in one statement,
   * and the transaction commits. When rows were left for the ordinary path (or none was claimed) it writes and commits
   * at once instead, before handing anything out.
   */
  function claimHeld(session: Session, request: SelectRequest, claim: PlainClaim): Promise<PlainClaimResult> {
    return new Promise<PlainClaimResult>((answer, refuse) => {
      let group: HeldGroup | null = null;
      const outcome = new OutcomeTracker();
      session(async (send) => {
        group = await selectAndHold(send, request, claim, outcome, answer);
        if (group === null) return;
        // Every page whose handler settled in this turn has sent its commit plan by the time this resolves.
        await new Promise<void>((resolve) => setImmediate(resolve));
        await sendParts(send, heldCommit(group, claim, outcome));
        held.committed(group, known);
      }).catch((error) => {
        if (group === null) {
          refuse(classify(error, outcome, 'store.claimDue', {}));
          return;
        }
        held.failed(group, known, (runId) => classify(error, outcome, 'store.transact', { runId }));
      });
    });
  }

  /**
   * The first round trip of `claimHeld`: `BEGIN` and the locking select, then core's plans. Answers the claim through
   * `answer` and the group it holds, or `null` when it committed at once (no run claimed, or rows left for the
   * ordinary path). The rows read end here, before the transaction's second round trip (see `selectAndPlan`).
   */
  async function selectAndHold(
    send: Send,
    request: SelectRequest,
    claim: PlainClaim,
    outcome: OutcomeTracker,
    answer: (result: PlainClaimResult) => void,
  ): Promise<HeldGroup | null> {
    const shared = sharedColumns.expected(request);
    const select = preparedCall(plainClaimStatement(tables, request, claim, shared, true));
    const selected = await sendParts(send, [...BEGIN, select]);
    const plain = planPlainClaims(request, claim, selected[BEGIN.length] as PlainClaimRow[], shared, sharedColumns);
    const writes = plain.claimed.map((write, i) => ({ current: plain.before[i] as RunRecord, write }));
    if (writes.length === 0 || plain.leftover > 0) {
      const parts: (string | PreparedCall)[] = [UNFLUSHED_COMMIT];
      if (writes.length > 0) parts.push(preparedCall(runWritesStatement(tables, writes, { allLocked: true })));
      outcome.committing();
      await sendParts(send, [...parts, 'COMMIT']);
      for (const w of writes) known.committed(w.write.run);
      answer(plain);
      return null;
    }
    const group = held.hold(writes);
    answer(plain);
    return group;
  }

  /**
   * The message that ends a held claim: one write of every run it holds (from the row selected to its latest
   * record), the notifications, and `COMMIT`, which waits for the flush only when a settle was folded in.
   */
  function heldCommit(group: HeldGroup, claim: PlainClaim, outcome: OutcomeTracker): (string | PreparedCall)[] {
    const all = held.close(group);
    const durability = held.fusedAny(group) ? [] : [UNFLUSHED_COMMIT];
    const notify = [...wakeNamespaces(all)].map((ns) => notifyText(channel, ns));
    outcome.committing();
    return [
      ...durability,
      preparedCall(runWritesStatement(tables, all, { allLocked: true, claimedFirst: claim })),
      ...notify,
      'COMMIT',
    ];
  }

  /**
   * A claim on one connection: the due runs that qualify for the plain claim (one round trip, `claimPlain`), and the
   * ordinary claim for any selected run that did not: `BEGIN` and the locking selects, then (after core's plans) the writes, their notifications and `COMMIT`,
   * all through statements prepared once per connection. A transaction of plain claims only does not wait for the
   * server's flush (see `UNFLUSHED_COMMIT`).
   */
  async function claimInSession(session: Session, request: SelectRequest, expired: boolean): Promise<RunRecord[]> {
    if (!expired) {
      const claim = plainClaimOf(request);
      if (claim !== undefined) {
        const plain = holdClaims ? await claimHeld(session, request, claim) : await claimPlain(session, request, claim);
        const runs = plain.claimed.map((w) => w.run);
        if (plain.leftover === 0 || runs.length >= request.limit) return runs;
        // What it left (a deadline passed, a time trigger fired) core plans the ordinary way, in the room left. The
        // runs claimed above are committed: if this fails they are still handed out, and the next claim meets the
        // rows left (and the error) again.
        if (runs.length === 0) return ordinaryClaim(session, request, false);
        const rest = await ordinaryClaim(session, { ...request, limit: request.limit - runs.length }, false).catch(
          () => [],
        );
        return [...runs, ...rest];
      }
    }
    return ordinaryClaim(session, request, expired);
  }

  /** The ordinary claim: the locking selects, core's plan for each row, then the writes (two round trips). */
  async function ordinaryClaim(session: Session, request: SelectRequest, expired: boolean): Promise<RunRecord[]> {
    const outcome = new OutcomeTracker();
    try {
      return await session(async (send) => {
        const claim = await selectAndPlan(send, request, expired);
        outcome.committing();
        if (claim === null) {
          await send(() => ({ text: 'COMMIT', prepares: [] }));
          return [];
        }
        await send((prepared) => compose(prepared, claim.parts));
        return claim.runs;
      });
    } catch (error) {
      throw classify(error, outcome, 'store.claimDue', {});
    }
  }

  /**
   * The first round trip of `claimInSession`: `BEGIN` and the locking selects, then core's plans and the message that
   * writes them (`null` when core planned nothing). The rows read and the records decoded from them end here, before
   * the second round trip: with hundreds of runs claimed at once, keeping them alive through it only fed the
   * collector.
   */
  async function selectAndPlan(
    send: Send,
    request: SelectRequest,
    expired: boolean,
  ): Promise<{ parts: (string | PreparedCall)[]; runs: RunRecord[] } | null> {
    const selects = candidateQueries(request, expired).map(preparedCall);
    const selected = await sendParts(send, [...BEGIN, ...selects]);
    const writes = planCandidates(request, selected.slice(BEGIN.length).flat() as RunRow[]);
    if (writes.length === 0) return null;
    const write = preparedCall(runWritesStatement(tables, writes, { allLocked: true }));
    const notify = [...wakeNamespaces(writes)].map((ns) => notifyText(channel, ns));
    const durability = writes.every((w) => isPlainClaim(w.write)) ? [UNFLUSHED_COMMIT] : [];
    return { parts: [...durability, write, ...notify, 'COMMIT'], runs: writes.map((w) => w.write.run) };
  }

  const store: PostgresStore = {
    name: 'postgres',
    schema,
    capabilities,

    async open() {
      if (opens++ > 0) return;
      try {
        connection = await connect();
      } catch (error) {
        opens = 0;
        throw new DocketError('CONNECTION_UNAVAILABLE', `cannot connect to PostgreSQL: ${(error as Error).message}`, {
          operation: 'store.open',
          cause: error,
        });
      }
      try {
        await applyMigrations(connection.db, schema);
      } catch (error) {
        const db = connection;
        connection = null;
        opens = 0;
        await db.close().catch(() => undefined);
        throw classify(error, new OutcomeTracker(), 'store.open', {});
      }
    },

    async close() {
      if (opens === 0) return;
      if (--opens > 0) return;
      const current = connection;
      connection = null;
      await current?.close();
    },

    async registerDefinition(definition) {
      const existing = await rows<{ hash: string }>(
        live(),
        sql`SELECT hash FROM ${DEFINITIONS} WHERE namespace = ${definition.namespace} AND name = ${definition.name} AND version = ${definition.version}`,
      );
      if (existing[0] && existing[0].hash !== definition.hash) {
        throw new DocketError(
          'DEFINITION_HASH_CONFLICT',
          `task ${definition.name}@${definition.version} is already registered with another definition`,
          { operation: 'queue.ready', details: { name: definition.name, version: definition.version } },
        );
      }
      if (!existing[0]) {
        await live().execute(
          sql`INSERT INTO ${DEFINITIONS} (namespace, name, version, hash, definition, created_at)
              VALUES (${definition.namespace}, ${definition.name}, ${definition.version}, ${definition.hash}, ${JSON.stringify(definition.definition)}, ${Date.now()})
              ON CONFLICT DO NOTHING`,
        );
        const stored = await rows<{ hash: string }>(
          live(),
          sql`SELECT hash FROM ${DEFINITIONS} WHERE namespace = ${definition.namespace} AND name = ${definition.name} AND version = ${definition.version}`,
        );
        if (stored[0]?.hash !== definition.hash) {
          throw new DocketError(
            'DEFINITION_HASH_CONFLICT',
            `task ${definition.name}@${definition.version} changed concurrently`,
            {
              operation: 'queue.ready',
            },
          );
        }
      }
    },

    createRun(request) {
      if (request.maxRuns === null) return startGrouped(request);
      const { run } = request;
      const maxRuns = request.maxRuns;
      return inTransaction(
        'task.start',
        async (tx): Promise<CreateRunResult> => {
          // A capped namespace counts its runs: its starts take turns, so two cannot both take the last place.
          await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${run.namespace}:capacity`}, 0))`);
          if (run.idempotencyKey !== null) {
            const existing = await rows<RunRow>(
              tx,
              sql`SELECT * FROM ${RUNS} WHERE namespace = ${run.namespace} AND task_name = ${run.taskName} AND idempotency_key = ${run.idempotencyKey}`,
            );
            if (existing[0]) return { kind: 'existing', run: rowToRun(existing[0]) };
          }
          const [count] = await rows<{ n: string | number }>(
            tx,
            sql`SELECT count(*) AS n FROM ${RUNS} WHERE namespace = ${run.namespace}`,
          );
          if (Number(count?.n ?? 0) >= maxRuns) return { kind: 'capacity' };
          const inserted = await insertRuns(tx, tables, [request]);
          if (!inserted.has(run.runId)) throw new Error('internal: a capped start was not inserted');
          return { kind: 'created', run };
        },
        { runId: run.runId, ...(run.idempotencyKey === null ? {} : { idempotencyKey: run.idempotencyKey }) },
      );
    },

    async getRun(namespace, runId) {
      const found = await rows<RunRow>(
        live(),
        sql`SELECT * FROM ${RUNS} WHERE namespace = ${namespace} AND run_id = ${runId}`,
      );
      return found[0] ? rowToRun(found[0]) : null;
    },

    async getHistory(namespace, runId) {
      const found = await rows<HistoryRow>(
        live(),
        sql`SELECT h.* FROM ${HISTORY} h JOIN ${RUNS} r ON r.run_id = h.run_id AND r.namespace = ${namespace}
            WHERE h.run_id = ${runId} ORDER BY h.seq`,
      );
      return found.map(rowToHistory);
    },

    async callbackCounts(namespace, runId): Promise<CallbackCounts> {
      const counts = { pending: 0, delivered: 0, deadLetters: 0 };
      const found = await rows<{ status: string; n: string | number }>(
        live(),
        sql`SELECT status, count(*) AS n FROM ${EVENTS} WHERE run_id = ${runId} AND namespace = ${namespace} GROUP BY status`,
      );
      for (const { status, n } of found) {
        if (status === 'delivered') counts.delivered += Number(n);
        else if (status === 'dead_letter') counts.deadLetters += Number(n);
        else counts.pending += Number(n);
      }
      return counts;
    },

    transact<T>(
      namespace: string,
      runId: string,
      plan: TransactPlan<T, PostgresTransaction>,
      options?: TransactOptions,
    ): Promise<T> {
      const holding = held.ended(runId);
      if (holding !== undefined) {
        // The run's claim has not committed yet: a pure plan goes into the claim's transaction if it can.
        const fused = options?.pure === true ? held.fuse(namespace, runId, plan) : undefined;
        return fused ?? holding.then(() => store.transact(namespace, runId, plan, options));
      }
      if (options?.pure === true) return transactGrouped<T>(namespace, runId, plan);
      known.forget(runId);
      let written: RunRecord | null = null;
      return inTransaction<T>(
        'store.transact',
        async (tx) => {
          const found = await rows<RunRow>(
            tx,
            sql`SELECT * FROM ${RUNS} WHERE namespace = ${namespace} AND run_id = ${runId} FOR UPDATE`,
          );
          const current = found[0] ? rowToRun(found[0]) : null;
          const { write, value } = (await plan(tx, current)) as PlanResult<T>;
          if (write !== null) {
            if (current === null) throw new Error('internal: write for a missing run');
            await applyWrite(tx, current, write);
            written = write.run;
          }
          return value;
        },
        { runId },
      ).then((value) => {
        if (written !== null) known.committed(written);
        return value;
      });
    },

    claimDue: (request) => selectAndApply(request, false),
    recoverExpired: (request) => selectAndApply({ ...request, tasks: [] }, true),

    async nextDueAt(namespace, tasks) {
      const reads: Statement[] = tasks.map((task) => ({
        text: `SELECT min(claim_due_at) AS due FROM ${tables.runs} WHERE namespace = $1 AND task_name = $2
            AND task_version = $3 AND claim_due_at IS NOT NULL`,
        params: [namespace, task.name, task.version],
      }));
      const dues: unknown[] = [];
      const session = connection?.session;
      if (session === undefined) {
        for (const read of reads) dues.push((await rows<{ due: unknown }>(live(), read))[0]?.due);
      } else {
        // After every claim that left slots free: one message of prepared reads, not one planned query per task.
        const results = await session((send) => sendParts(send, reads.map(preparedCall)));
        for (const rows of results) dues.push((rows[0] as { due: unknown } | undefined)?.due);
      }
      let earliest: number | null = null;
      for (const value of dues) {
        const due = value === null || value === undefined ? null : Number(value);
        if (due !== null && (earliest === null || due < earliest)) earliest = due;
      }
      return earliest;
    },

    claimEvents(request) {
      return inTransaction('store.claimEvents', async (tx) => {
        const due = await rows<EventRow>(
          tx,
          sql`SELECT * FROM ${EVENTS} WHERE namespace = ${request.namespace}
              AND ((status IN ('pending', 'retrying') AND due_at <= ${request.now})
                OR (status = 'delivering' AND lease_expires_at <= ${request.now}))
              ORDER BY due_at LIMIT ${request.limit * 4} FOR UPDATE SKIP LOCKED`,
        );
        const written: CallbackEventRecord[] = [];
        for (const row of due) {
          if (written.length >= request.limit) break;
          const event = rowToEvent(row);
          const wanted = request.tasks.some(
            (t) => t.name === event.taskName && t.version === event.taskVersion && t.kinds.includes(event.kind),
          );
          if (!wanted) continue;
          const next = request.plan(event);
          if (next === null) continue;
          await writeEvent(tx, event, next);
          written.push(next);
        }
        return written;
      });
    },

    transactEvent<T>(namespace: string, eventId: string, plan: EventPlan<T>) {
      return inTransaction('store.transactEvent', async (tx) => {
        const found = await rows<EventRow>(
          tx,
          sql`SELECT * FROM ${EVENTS} WHERE namespace = ${namespace} AND event_id = ${eventId} FOR UPDATE`,
        );
        const current = found[0] ? rowToEvent(found[0]) : null;
        const { write, value } = plan(current);
        if (write !== null) {
          if (current === null) throw new Error('internal: write for a missing event');
          await writeEvent(tx, current, write);
        }
        return value;
      });
    },

    async listEvents(request) {
      const found = await rows<EventRow>(
        live(),
        sql`SELECT * FROM ${EVENTS} WHERE namespace = ${request.namespace} AND status = ${request.status}
            AND event_id > ${request.after ?? ''} ORDER BY event_id LIMIT ${request.limit}`,
      );
      return found.map(rowToEvent);
    },

    async listRuns(request) {
      const filters = [sql`namespace = ${request.namespace}`, sql`run_id > ${request.after ?? ''}`];
      if (request.taskName !== null) filters.push(sql`task_name = ${request.taskName}`);
      if (request.status !== null) filters.push(sql`status = ${request.status}`);
      const found = await rows<RunRow>(
        live(),
        sql`SELECT * FROM ${RUNS} WHERE ${sql.join(filters, sql` AND `)} ORDER BY run_id LIMIT ${request.limit}`,
      );
      return found.map(rowToRun);
    },

    runCommand<T extends Json>(namespace: string, command: CommandRequest, plan: CommandPlan<T>) {
      if (command.runId !== undefined) known.forget(command.runId);
      return inTransaction('store.runCommand', async (tx) => {
        await tx.execute(
          sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${namespace}:command:${command.commandId}`}, 0))`,
        );
        const [receipt] = await rows<{ request_hash: string; result: string }>(
          tx,
          sql`SELECT request_hash, result FROM ${COMMANDS} WHERE namespace = ${namespace} AND command_id = ${command.commandId}`,
        );
        if (receipt)
          return { result: JSON.parse(receipt.result) as T, replayed: true, requestHash: receipt.request_hash };
        const runRow =
          command.runId === undefined
            ? undefined
            : (
                await rows<RunRow>(
                  tx,
                  sql`SELECT * FROM ${RUNS} WHERE namespace = ${namespace} AND run_id = ${command.runId} FOR UPDATE`,
                )
              )[0];
        const eventRow =
          command.eventId === undefined
            ? undefined
            : (
                await rows<EventRow>(
                  tx,
                  sql`SELECT * FROM ${EVENTS} WHERE namespace = ${namespace} AND event_id = ${command.eventId} FOR UPDATE`,
                )
              )[0];
        const run = runRow ? rowToRun(runRow) : null;
        const event = eventRow ? rowToEvent(eventRow) : null;
        const decided = plan({ run, event });
        if (decided.run !== null) {
          if (run === null) throw new Error('internal: command write for a missing run');
          await applyWrite(tx, run, decided.run);
        }
        if (decided.event !== null) {
          if (event === null) throw new Error('internal: command write for a missing event');
          await writeEvent(tx, event, decided.event);
        }
        await tx.execute(
          sql`INSERT INTO ${COMMANDS} (namespace, command_id, request_hash, result, created_at)
              VALUES (${namespace}, ${command.commandId}, ${command.requestHash}, ${JSON.stringify(decided.result)}, ${command.now})`,
        );
        return { result: decided.result, replayed: false, requestHash: command.requestHash };
      });
    },

    collect(request) {
      return inTransaction('operator.maintenance.collect', async (tx) => {
        const cutoff = Math.max(0, Math.floor(request.runsBefore)).toString(16).padStart(12, '0');
        const candidates = await rows<RunRow>(
          tx,
          sql`SELECT * FROM ${RUNS} WHERE namespace = ${request.namespace} AND run_id > ${request.after ?? ''}
              AND run_id < ${cutoff} ORDER BY run_id LIMIT ${request.limit} FOR UPDATE SKIP LOCKED`,
        );
        const counts = { runs: 0, events: 0, deadLetters: 0 };
        for (const row of candidates) {
          const terminal = row.status === 'success' || row.status === 'failed' || row.status === 'cancelled';
          if (!terminal || Number(row.updated_at) >= request.runsBefore) continue;
          const [unsettled] = await rows<{ n: string | number }>(
            tx,
            sql`SELECT count(*) AS n FROM ${EVENTS} WHERE run_id = ${row.run_id} AND status IN ('pending', 'retrying', 'delivering')`,
          );
          if (Number(unsettled?.n ?? 0) > 0) continue;
          counts.events += (
            await rows(
              tx,
              sql`DELETE FROM ${EVENTS} WHERE run_id = ${row.run_id} AND status = 'delivered' RETURNING event_id`,
            )
          ).length;
          await tx.execute(sql`DELETE FROM ${HISTORY} WHERE run_id = ${row.run_id}`);
          await tx.execute(sql`DELETE FROM ${RUNS} WHERE run_id = ${row.run_id}`);
          counts.runs++;
        }
        counts.events += (
          await rows(
            tx,
            sql`DELETE FROM ${EVENTS} WHERE namespace = ${request.namespace} AND status = 'delivered' AND delivered_at < ${request.runsBefore} RETURNING event_id`,
          )
        ).length;
        counts.deadLetters += (
          await rows(
            tx,
            sql`DELETE FROM ${EVENTS} WHERE namespace = ${request.namespace} AND status = 'dead_letter' AND dead_at < ${request.deadLettersBefore} RETURNING event_id`,
          )
        ).length;
        await tx.execute(
          sql`DELETE FROM ${COMMANDS} WHERE namespace = ${request.namespace} AND created_at < ${request.runsBefore}`,
        );
        const next = candidates.length === request.limit ? (candidates.at(-1)?.run_id ?? null) : null;
        return { ...counts, next };
      });
    },

    subscribe(listener) {
      let stop: (() => Promise<void>) | null = null;
      let cancelled = false;
      const conn = connection;
      void conn?.listener
        ?.listen(channel, () => listener())
        .then((unlisten) => {
          if (cancelled) void unlisten().catch(() => undefined);
          else stop = unlisten;
        })
        .catch(() => undefined);
      return () => {
        cancelled = true;
        void stop?.().catch(() => undefined);
      };
    },
  };
  return store;
}
