import type { PGlite } from '@electric-sql/pglite';
import type { Pool, PoolClient } from 'pg';
import type { PostgresConnection } from './connection.js';
import type { PostgresStoreOptions } from './index.js';
import { Checkouts, endPool, poolTransaction } from './pool-clients.js';
import type { Send } from './wire/session.js';

/** How long a pool this store made waits for a connection before the call fails as a connection loss. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** How long a pool this store made waits for a statement's answer (the client side's `query_timeout`). */
export const STATEMENT_TIMEOUT_MS = 60_000;

/** Connects as the options say: PGlite in-process, or a `pg` pool (the application's, or one made here). */
export async function connect(options: PostgresStoreOptions): Promise<PostgresConnection> {
  if (options.pglite) {
    const { drizzle } = await import('drizzle-orm/pglite');
    const client = options.pglite as unknown as PGlite;
    return {
      db: drizzle({ client }),
      listener: { listen: (channel, onNotify) => client.listen(channel, (payload) => onNotify(payload)) },
      close: async () => {},
    };
  }
  const pg = await import('pg');
  const { drizzle } = await import('drizzle-orm/node-postgres');
  const owned = options.pool === undefined;
  const pool: Pool =
    (options.pool as unknown as Pool | undefined) ??
    new pg.default.Pool({
      connectionString: options.connectionString as string,
      // Bounded waits: a checkout that finds no connection in 10 s fails, a statement with no answer in 60 s fails
      // (both store failures: no attempt consumed; the client that timed out is discarded), and TCP keepalive
      // notices a server that went away without closing the socket.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: STATEMENT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      ...('poolConfig' in options ? options.poolConfig : {}),
    });
  if (owned) {
    // Only on a pool this store made: an application's own pool is the application's to watch (and a listener per
    // store on a shared pool would pile up).
    pool.on('error', () => {
      // An idle client lost its connection; the pool replaces it. Errors of queries reach their callers.
    });
    pool.on('connect', (client) => {
      // A client whose connection dies mid-query also emits 'error'; the query's caller already gets that error.
      client.on('error', () => undefined);
    });
  }
  const checkouts = new Checkouts(pool);
  checkouts.give(await checkouts.take());
  return {
    db: drizzle({ client: pool }),
    listener: { listen: (channel, onNotify, onLost) => listenOn(checkouts, channel, onNotify, onLost) },
    session: (work) => inSession(checkouts, work),
    transaction: (work) => poolTransaction(checkouts, (client) => drizzle({ client }), work),
    close: async () => {
      if (owned) await endPool(pool, checkouts);
    },
  };
}

/**
 * LISTENs on a client of its own from the pool; answers the UNLISTEN. A client that errors is destroyed, not returned
 * to the pool, and `onLost` is told.
 */
async function listenOn(
  checkouts: Checkouts,
  channel: string,
  onNotify: (payload: string) => void,
  onLost?: (error: unknown) => void,
): Promise<() => Promise<void>> {
  const listening = await checkouts.take();
  const onNotification = (message: { channel: string; payload?: string }) => {
    if (message.channel === channel) onNotify(message.payload ?? '');
  };
  let lost = false;
  const onError = (error: unknown) => {
    if (lost) return;
    lost = true;
    listening.off('notification', onNotification);
    // A broken client is destroyed, not returned to the pool.
    checkouts.give(listening, error ?? new Error('LISTEN connection lost'));
    onLost?.(error);
  };
  listening.on('notification', onNotification);
  listening.on('error', onError);
  try {
    await listening.query(`LISTEN "${channel}"`);
  } catch (error) {
    onError(error);
    throw error;
  }
  return async () => {
    if (lost) return;
    lost = true;
    await listening.query(`UNLISTEN "${channel}"`).catch(() => undefined);
    // The client goes back to the pool: it must not keep this listener for its next user.
    listening.off('notification', onNotification);
    listening.off('error', onError);
    checkouts.give(listening);
  };
}

/** Where a pooled connection keeps the names of the statements Docket prepared on it. */
const PREPARED = Symbol('docket.prepared');

/** A pipelined session on one pooled client (see `wire/session.ts`); a failed one drops its connection. */
async function inSession<T>(checkouts: Checkouts, work: (send: Send) => Promise<T>): Promise<T> {
  const client = (await checkouts.take()) as PoolClient & { [PREPARED]?: Set<string> };
  const prepared = client[PREPARED] ?? new Set<string>();
  client[PREPARED] = prepared;
  try {
    const value = await work(async (build) => {
      const { text, prepares } = build(prepared);
      const result = await client.query(text);
      for (const name of prepares) prepared.add(name);
      return (Array.isArray(result) ? result : [result]) as { rows: unknown[] }[];
    });
    checkouts.give(client);
    return value;
  } catch (error) {
    // A transaction may be open and aborted, a PREPARE may or may not have happened: drop the connection.
    checkouts.give(client, error ?? new Error('session failed'));
    throw error;
  }
}
