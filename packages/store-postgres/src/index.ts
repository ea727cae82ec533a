import { DocketError } from '@docket/core';
import type { PostgresStore } from './connection.js';
import { connect } from './pool-connection.js';
import { createPostgresStore } from './postgres-store.js';

export type { Listener, PostgresConnection, PostgresStore, PostgresTransaction } from './connection.js';
export { MIGRATIONS_FOLDER } from './migrations.js';
export {
  docketCommands,
  docketDefinitions,
  docketEvents,
  docketHistory,
  docketRuns,
  docketSchedules,
  docketSettings,
} from './schema.js';
export type { Message, Results, Send, Session } from './wire/session.js';

/**
 * A node-postgres `Pool`, typed by shape so that this package's types need neither `pg` nor PGlite installed (both
 * are optional peers: a user of one does not install the other).
 */
export interface PgPoolLike {
  /** Checks out one pooled client. */
  // biome-ignore lint/suspicious/noExplicitAny: a structural stand-in for pg.Pool's methods.
  connect(): Promise<any>;
  /** Closes the pool. */
  end(): Promise<void>;
  /** Subscribes to the pool's events (`error`). */
  // biome-ignore lint/suspicious/noExplicitAny: pg.Pool.on has one overload per event.
  on(...args: any[]): any;
}

/** A PGlite instance, typed by shape (see `PgPoolLike`). */
export interface PGliteLike {
  /** Runs one query. */
  // biome-ignore lint/suspicious/noExplicitAny: a structural stand-in for PGlite's query.
  query(...args: any[]): Promise<any>;
  /** Subscribes to a NOTIFY channel; resolves to the unsubscribe function. */
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/**
 * Options of `postgresStore`: a connection string, an application's `pg` Pool (as `pool`, or as `client`, the name
 * the contract gives it), or a PGlite instance.
 */
export type PostgresStoreOptions = (
  | {
      connectionString: string;
      pool?: undefined;
      client?: undefined;
      pglite?: undefined;
      poolConfig?: Record<string, unknown>;
    }
  | { pool: PgPoolLike; connectionString?: undefined; client?: undefined; pglite?: undefined }
  | { client: PgPoolLike; connectionString?: undefined; pool?: undefined; pglite?: undefined }
  | { pglite: PGliteLike; connectionString?: undefined; pool?: undefined; client?: undefined }
) & {
  /** The schema Docket's tables live in (several installations can share a database); default `docket`. */
  schema?: string;
  /**
   * Whether a claim's transaction stays open for the rest of the event loop's turn, so that the pages that settle
   * synchronously commit together with their claim (see docs/postgres-store-internals.md, "Held claims"); default `true`.
   */
  holdClaims?: boolean;
  /**
   * `false`: open an existing schema migrated by this version and change nothing in it (no schema, table or
   * migration is created; anything else is `SCHEMA_MISMATCH`). For tools that only read, such as `docket runs list`.
   * Default `true`: `open()` creates and migrates the schema.
   */
  migrate?: boolean;
};

/**
 * The PostgreSQL store: many worker processes on many machines share it. Claims use `FOR UPDATE SKIP LOCKED`, idle
 * workers wake on `LISTEN/NOTIFY`, effects may be async, migrations run once under an advisory lock.
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  const given = ['connectionString', 'pool', 'client', 'pglite'].filter(
    (k) => (options as Record<string, unknown>)?.[k] !== undefined,
  );
  if (given.length !== 1) {
    throw new DocketError(
      'CONFIG_INVALID',
      'postgresStore needs exactly one of connectionString, pool (or client) and pglite',
      { operation: 'postgresStore' },
    );
  }
  for (const key of Object.keys(options)) {
    if (
      !['connectionString', 'pool', 'client', 'pglite', 'schema', 'poolConfig', 'holdClaims', 'migrate'].includes(key)
    ) {
      throw new DocketError('CONFIG_INVALID', `unknown option ${key}`, { operation: 'postgresStore' });
    }
  }
  if (options.connectionString !== undefined && typeof options.connectionString !== 'string') {
    throw new DocketError('CONFIG_INVALID', 'connectionString must be a string', { operation: 'postgresStore' });
  }
  const pool = options.pool ?? options.client;
  if (pool !== undefined && !isPool(pool)) {
    throw new DocketError(
      'CONFIG_INVALID',
      'pass a pg Pool: one pg Client is one connection, and Docket runs transactions side by side',
      { operation: 'postgresStore', details: { path: options.pool === undefined ? 'client' : 'pool' } },
    );
  }
  if (options.holdClaims !== undefined && typeof options.holdClaims !== 'boolean') {
    throw new DocketError('CONFIG_INVALID', 'holdClaims must be a boolean', {
      operation: 'postgresStore',
      details: { path: 'holdClaims' },
    });
  }
  if (options.migrate !== undefined && typeof options.migrate !== 'boolean') {
    throw new DocketError('CONFIG_INVALID', 'migrate must be a boolean', {
      operation: 'postgresStore',
      details: { path: 'migrate' },
    });
  }
  const normalized = pool === undefined ? options : ({ pool, schema: options.schema } as PostgresStoreOptions);
  return createPostgresStore(() => connect(normalized), options.schema ?? 'docket', {
    holdClaims: options.holdClaims ?? true,
    migrate: options.migrate ?? true,
  });
}

/** A pg Pool (it counts its clients), as opposed to one pg Client. */
function isPool(value: unknown): value is PgPoolLike {
  const pool = value as Partial<Record<'connect' | 'end' | 'on', unknown>> & { totalCount?: unknown };
  return (
    typeof pool?.connect === 'function' &&
    typeof pool.end === 'function' &&
    typeof pool.on === 'function' &&
    typeof pool.totalCount === 'number'
  );
}
