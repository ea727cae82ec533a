import type { Store } from '@docket/core';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import type { Session } from './wire/session.js';

/** The drizzle transaction an effect or a commit-time check receives: writes on it commit with the transition. */
// biome-ignore lint/suspicious/noExplicitAny: the transaction type depends on the driver (node-postgres or PGlite).
export type PostgresTransaction = PgTransaction<PgQueryResultHKT, any, any>;

/** Something that can be LISTENed on: a node-postgres pool (a dedicated client) or a PGlite instance. */
export interface Listener {
  /**
   * Subscribes to a NOTIFY channel; resolves to the unsubscribe function. `onLost` is called once if the listening
   * connection dies (its backend killed, the server restarted): the subscription is over and must be made again.
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onLost?: (error: unknown) => void,
  ): Promise<() => Promise<void>>;
}

/** What `postgresStore` needs from a driver: a drizzle database and a way to listen. */
export interface PostgresConnection {
  // biome-ignore lint/suspicious/noExplicitAny: any drizzle PG database (node-postgres or PGlite).
  db: PgDatabase<PgQueryResultHKT, any>;
  listener: Listener | null;
  /**
   * Optional: runs work on one pooled connection that sends statements as text, several per round trip, calling
   * statements prepared once per connection (see `wire/session.ts`). node-postgres has it; with PGlite (one in-process
   * connection) the store uses drizzle transactions throughout.
   */
  session?: Session;
  /**
   * Optional: runs `work` in one transaction on a connection of its own, which goes back to the pool whatever fails
   * (its `BEGIN` included) and is discarded when it broke. Without it (PGlite) the store uses `db.transaction`.
   */
  transaction?: <T>(work: (tx: PostgresTransaction) => Promise<T>) => Promise<T>;
  /** Closes every connection the store opened (not a pool the application passed). */
  close(): Promise<void>;
}

/** The PostgreSQL `Store`. */
export interface PostgresStore extends Store<PostgresTransaction> {
  /** The schema the tables live in. */
  readonly schema: string;
}
