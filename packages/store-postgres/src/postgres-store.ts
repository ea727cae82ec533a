import { DocketError, type StoreCapabilities } from '@docket/core';
import { bindVerbs } from '@docket/core/store';
import type { PostgresConnection, PostgresStore, PostgresTransaction } from './connection.js';
import { PgContext } from './context.js';
import { classify, OutcomeTracker } from './errors.js';
import { startBatcher, transactBatcher } from './fast/group-commit.js';
import { applyMigrations, assertMigrated } from './migrations.js';
import { nextDueAt, selectAndApply } from './sql/claim.js';
import { collect } from './sql/collect.js';
import { runCommand } from './sql/commands.js';
import { registerDefinition } from './sql/definitions.js';
import { claimEvents, listEvents, transactEvent } from './sql/events.js';
import { callbackCounts, getHistory, getRun, listRuns } from './sql/reads.js';
import { dueSchedules, listSchedules, transactSchedule } from './sql/schedules.js';
import { transact } from './sql/settle.js';
import { createCappedRun, createRuns } from './sql/start.js';

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
      ctx.connection = await connectOrFail(connect, () => {
        opens = 0;
      });
      try {
        if (migrate) await applyMigrations(ctx.connection.db, schema);
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
      const current = ctx.connection;
      ctx.connection = null;
      await current?.close();
    },
    ...bindVerbs<PgContext, PostgresTransaction>(ctx, {
      registerDefinition,
      createRun: (c, request) =>
        request.maxRuns === null ? startGrouped(request) : createCappedRun(c, request, request.maxRuns),
      createRuns,
      transactSchedule,
      dueSchedules,
      listSchedules,
      getRun,
      getHistory,
      callbackCounts,
      transact: (c, namespace, runId, plan, options) => transact(c, transactGrouped, namespace, runId, plan, options),
      claimDue: (c, request) => selectAndApply(c, request, false),
      recoverExpired: (c, request) => selectAndApply(c, { ...request, tasks: [] }, true),
      nextDueAt,
      claimEvents,
      transactEvent,
      listEvents,
      listRuns,
      runCommand,
      collect,
    }),
    subscribe: (listener) => subscribe(ctx, listener),
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

/** LISTENs on the store's channel on the open connection's listener; the returned function stops listening. */
function subscribe(ctx: PgContext, listener: () => void): () => void {
  let stop: (() => Promise<void>) | null = null;
  let cancelled = false;
  void ctx.connection?.listener
    ?.listen(ctx.channel, () => listener())
    .then((unlisten) => {
      if (cancelled) void unlisten().catch(() => undefined);
      else stop = unlisten;
    })
    .catch(() => undefined);
  return () => {
    cancelled = true;
    void stop?.().catch(() => undefined);
  };
}
