import type { Pool, PoolClient } from 'pg';
import { WAIT_BOUND_MS, within } from './bounded-wait.js';
import type { PostgresConnection, PostgresTransaction } from './connection.js';

/** Makes a drizzle database on one checked-out client (drizzle's `node-postgres` `drizzle`). */
export type DrizzleOn = (client: PoolClient) => PostgresConnection['db'];

/**
 * The clients this store checked out of its pool and has not given back. Every checkout goes back exactly once,
 * whatever fails, and a broken one is discarded; `dropAll` ends the ones a hung call still holds, so that closing
 * the pool cannot wait on them for ever.
 */
export class Checkouts {
  private readonly out = new Set<PoolClient>();

  constructor(private readonly pool: Pool) {}

  /** Checks out one client. */
  async take(): Promise<PoolClient> {
    const client = await this.pool.connect();
    this.out.add(client);
    return client;
  }

  /** Gives `client` back (once: a second call does nothing); with `broken`, the pool discards it. */
  give(client: PoolClient, broken?: unknown): void {
    if (!this.out.delete(client)) return;
    client.release(broken === undefined ? undefined : broken instanceof Error ? broken : new Error(String(broken)));
  }

  /** Discards every client still checked out (their calls fail as connection losses). */
  dropAll(): void {
    for (const client of [...this.out]) this.give(client, new Error('the store was closed'));
  }
}

/** Marks that `work` threw nothing (an application may throw `undefined`). */
const NO_ERROR = Symbol('no error');
/** Where a checked-out client keeps the drizzle database made on it. */
const DB = Symbol('docket.db');

/**
 * Runs `work` in one transaction on a client of its own. drizzle's pool transaction sends `BEGIN` before it starts
 * guarding the client, so a connection lost at that moment never went back to the pool (after enough of them the pool
 * had no client left and every call waited for ever); here the client goes back whatever fails, and is discarded
 * when `BEGIN`, `COMMIT` or `ROLLBACK` failed (its state is then unknown).
 */
export async function poolTransaction<T>(
  checkouts: Checkouts,
  drizzleOn: DrizzleOn,
  work: (tx: PostgresTransaction) => Promise<T>,
): Promise<T> {
  const client = (await checkouts.take()) as PoolClient & { [DB]?: PostgresConnection['db'] };
  client[DB] ??= drizzleOn(client);
  let workError: unknown = NO_ERROR;
  let broken: unknown;
  try {
    return await client[DB].transaction(async (tx) => {
      try {
        return await work(tx as PostgresTransaction);
      } catch (error) {
        workError = error;
        throw error;
      }
    });
  } catch (error) {
    if (error !== workError) broken = error ?? new Error('transaction failed');
    throw error;
  } finally {
    checkouts.give(client, broken);
  }
}

/**
 * Ends a pool this store made, waiting at most `boundMs` for the calls still running: past it, their clients are
 * discarded so that the pool can end, and it is waited for at most `boundMs` more (a client a driver kept without
 * giving it back would hold it for ever; the pool then ends when that client comes back).
 */
export async function endPool(pool: Pool, checkouts: Checkouts, boundMs = WAIT_BOUND_MS): Promise<void> {
  const ended = pool.end().then(() => true);
  if (await within(ended, boundMs)) return;
  checkouts.dropAll();
  await within(ended, boundMs);
}
