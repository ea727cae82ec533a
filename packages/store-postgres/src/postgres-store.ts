import { DocketError, type StoreCapabilities, type StoreLog } from '@docket/core';
import { bindVerbs } from '@docket/core/store';
import { WAIT_BOUND_MS, within } from './bounded-wait.js';
import type { PostgresConnection, PostgresStore, PostgresTransaction } from './connection.js';
import { PgContext } from './context.js';
import { classify, OutcomeTracker } from './errors.js';
import { applyMigrations, assertMigrated } from './migrations.js';
import { claimCallbackEvents, listCallbackEvents, transactCallbackEvent } from './sql/callback-events.js';
import { changesHead, readChanges, trimChanges } from './sql/changes.js';
import { nextDueAt, selectAndApply } from './sql/claim/index.js';
import { collect } from './sql/collect.js';
import { runCommand } from './sql/commands.js';
import { getDefinition, listTasks, registerDefinition } from './sql/definitions.js';
import {
  callbackCounts,
  callbackCountsOf,
  getHistory,
  getRun,
  listChildren,
  listRuns,
  runStats,
  settledPerMinute,
} from './sql/reads.js';
import { dueSchedules, listSchedules, transactSchedule } from './sql/schedules.js';
import { startBatcher } from './sql/start/batch.js';
import { createCappedRun, createRuns } from './sql/start/index.js';
import { transactBatcher } from './sql/transact/batch.js';
import { transact } from './sql/transact/index.js';

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/** Creates the store on a connection made by `connect` (see `index.ts` for `connectionString`, `pool`, `pglite`). */
export function createPostgresStore(
  connect: () => Promise<PostgresConnection>,
  schema = 'docket',
  { holdClaims = true, migrate = true }: { holdClaims?: boolean; migrate?: boolean } = {},
): PostgresStore {
  if (!SCHEMA.test(schema)) {
    throw new DocketError('CONFIG_INVALID', 'schema must be a lowercase SQL identifier', {
      operation: 'postgresStore',
      details: { path: 'schema' },
    });
  }
  const capabilities: StoreCapabilities = { asyncTransactions: true, multiProcess: true };
  const ctx = new PgContext(schema, holdClaims);
  const session = () => ctx.session;
  const startGrouped = startBatcher(ctx.tables, ctx.transaction, session, () => ctx.live());
  const transactGrouped = transactBatcher(ctx.tables, ctx.transaction, ctx.known, session);
  let opens = 0;

  return {
    name: 'postgres',
    schema,
    capabilities,
    async open() {
      if (opens++ > 0) return;
      // The schema may have been rebuilt since the last open: versions are known again as they are met.
      ctx.tables.versions.forget();
      ctx.connection = await connectOrFail(connect, () => {
        opens = 0;
      });
      try {
        if (migrate) await applyMigrations(ctx.connection, schema);
        else await assertMigrated(ctx.connection.db, schema);
      } catch (error) {
        const db = ctx.connection;
        ctx.connection = null;
        opens = 0;
        await db.close().catch(() => undefined);
        throw classify(error, new OutcomeTracker(), 'store.open', {});
      }
    },
    async close() {
      if (opens === 0) return;
      if (--opens > 0) return;
      // A claim answers its runs before its held transaction commits: that commit ends before the connection does.
      const committed = ctx.held.allEnded().then(() => true);
      await within(committed, WAIT_BOUND_MS);
      const current = ctx.connection;
      ctx.connection = null;
      await current?.close();
    },
    ...bindVerbs<PgContext, PostgresTransaction>(ctx, {
      registerDefinition: classified('store.registerDefinition', registerDefinition),
      listTasks: classified('store.listTasks', listTasks),
      getDefinition: classified('store.getDefinition', getDefinition),
      createRun: (c, request) =>
        request.maxRuns === null ? startGrouped(request) : createCappedRun(c, request, request.maxRuns),
      createRuns,
      transactSchedule,
      dueSchedules: classified('store.dueSchedules', dueSchedules),
      listSchedules: classified('store.listSchedules', listSchedules),
      getRun: classified('store.getRun', getRun),
      getHistory: classified('store.getHistory', getHistory),
      callbackCounts: classified('store.callbackCounts', callbackCounts),
      runStats: classified('store.runStats', runStats),
      callbackCountsOf: classified('store.callbackCountsOf', callbackCountsOf),
      settledPerMinute: classified('store.settledPerMinute', settledPerMinute),
      transact: (c, namespace, runId, plan, options) => transact(c, transactGrouped, namespace, runId, plan, options),
      claimDue: (c, request) => selectAndApply(c, request, false),
      recoverExpired: (c, request) => selectAndApply(c, { ...request, tasks: [] }, true),
      nextDueAt: classified('store.nextDueAt', nextDueAt),
      claimCallbackEvents,
      transactCallbackEvent,
      listCallbackEvents: classified('store.listCallbackEvents', listCallbackEvents),
      listRuns: classified('store.listRuns', listRuns),
      listChildren: classified('store.listChildren', listChildren),
      runCommand,
      collect,
      readChanges: classified('operator.changes', readChanges),
      changesHead: classified('queue.watch', changesHead),
      trimChanges: classified('operator.maintenance.collect', trimChanges),
    }),
    subscribe: (listener, log) => subscribe(ctx, listener, log),
    healthReasons: () => (ctx.listenLost === null ? [] : [ctx.listenLost]),
  };
}

/**
 * A verb of one statement (the reads, the definition's registration, the due schedules) whose driver errors come out
 * as `DocketError`s: a lost connection (or a statement the server did not answer in time) is
 * `CONNECTION_UNAVAILABLE`, anything else of the driver `STORAGE_FAILURE`. (The verbs that open a transaction map
 * their errors in `PgContext.inTransaction`.) Registering a definition again is harmless, so its caller may retry.
 */
function classified<A extends unknown[], R>(
  operation: string,
  verb: (ctx: PgContext, ...args: A) => Promise<R>,
): (ctx: PgContext, ...args: A) => Promise<R> {
  return async (ctx, ...args) => {
    try {
      return await verb(ctx, ...args);
    } catch (error) {
      throw classify(error, new OutcomeTracker(), operation, {});
    }
  };
}

async function connectOrFail(
  connect: () => Promise<PostgresConnection>,
  onFailure: () => void,
): Promise<PostgresConnection> {
  try {
    return await connect();
  } catch (error) {
    onFailure();
    throw new DocketError('CONNECTION_UNAVAILABLE', `cannot connect to PostgreSQL: ${(error as Error).message}`, {
      operation: 'store.open',
      cause: error,
    });
  }
}

/** The first wait before listening again after the LISTEN connection was lost, and the longest. */
const RELISTEN_FIRST_MS = 100;
const RELISTEN_MAX_MS = 5_000;

/**
 * LISTENs on the store's channel on the open connection's listener; the returned function stops listening. When the
 * listening connection is lost, it listens again with backoff (0.1 s doubling to 5 s), `ctx.listenLost` says why
 * meanwhile (for `health()`), and the listener is called once it is back, so that nothing notified in between waits
 * for a poll.
 */
function subscribe(ctx: PgContext, listener: () => void, log?: StoreLog): () => void {
  let stop: (() => Promise<void>) | null = null;
  let cancelled = false;
  let timer: NodeJS.Timeout | null = null;
  const attempt = (waitMs: number) => {
    const listening = ctx.connection?.listener?.listen(
      ctx.channel,
      () => listener(),
      (error) => lost(error, waitMs),
    );
    void listening
      ?.then((unlisten) => {
        if (cancelled) {
          void unlisten().catch(() => undefined);
          return;
        }
        stop = unlisten;
        if (ctx.listenLost !== null) {
          ctx.listenLost = null;
          log?.info({ store: 'postgres' }, 'LISTEN connection is back');
          listener();
        }
      })
      .catch((error: unknown) => lost(error, waitMs));
  };
  const lost = (error: unknown, waitMs: number) => {
    if (cancelled || timer !== null) return;
    stop = null;
    const message = (error as Error)?.message ?? String(error);
    if (ctx.listenLost === null) {
      log?.warn({ store: 'postgres', err: { message } }, 'LISTEN connection lost; listening again, polling meanwhile');
    }
    ctx.listenLost = `LISTEN connection lost (${message}); listening again, polling meanwhile`;
    timer = setTimeout(() => {
      timer = null;
      attempt(Math.min(RELISTEN_MAX_MS, waitMs * 2));
    }, waitMs);
    timer.unref?.();
  };
  attempt(RELISTEN_FIRST_MS);
  return () => {
    cancelled = true;
    if (timer !== null) clearTimeout(timer);
    void stop?.().catch(() => undefined);
  };
}
