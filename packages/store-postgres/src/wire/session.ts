import type { PreparedCall } from './prepared-calls.js';

/** One message to the server: statements as one text, and the prepared statements it creates on the connection. */
export interface Message {
  text: string;
  prepares: string[];
}

/** The rows of every statement of a message, in order. */
export type Results = { rows: unknown[] }[];

/** Sends one message on the session's connection; `build` writes it knowing what that connection has prepared. */
export type Send = (build: (prepared: ReadonlySet<string>) => Message) => Promise<Results>;

/**
 * Runs `work` on one pooled connection, which may send several messages (a transaction can span them: `BEGIN` in
 * one, `COMMIT` in a later one). If `work` throws, the connection is dropped rather than returned to the pool, so no
 * half-done transaction or unknown prepared statement outlives it.
 */
export type Session = <T>(work: (send: Send) => Promise<T>) => Promise<T>;

/**
 * How a session's transaction begins. Docket's statements are prepared once per connection and called with new values
 * every time; left to itself the server re-plans such a call for its values (a fifth of a small write's time here),
 * so the transaction asks for the prepared, generic plan. `SET LOCAL` ends with the transaction, so a pooled
 * connection that an application shares keeps its own setting.
 */
export const BEGIN = ['BEGIN', 'SET LOCAL plan_cache_mode = force_generic_plan'] as const;

/**
 * What a transaction of plain claims adds to `BEGIN`: its COMMIT does not wait for the server to flush it to disk.
 * Such a commit is visible at once, and any later commit that waits for the flush (the claimed run's settle, its
 * heartbeat, its budget reservation, anyone else's write) makes it durable too, since the server's log is written in
 * order. Only a server crash within a fraction of a second of the claim can lose it, and then the run is claimable
 * again exactly as before the claim (the worker holding it is fenced out when it settles): the same outcome as a worker
 * that dies with the lease. Starts, settles and every other write wait for the flush.
 */
export const UNFLUSHED_COMMIT = 'SET LOCAL synchronous_commit = off';

/**
 * Writes a message of plain statements and prepared calls, preparing the calls the connection lacks first. `at[i]`
 * is the index of part `i`'s result among the message's results.
 */
export function compose(
  prepared: ReadonlySet<string>,
  parts: readonly (string | PreparedCall)[],
): Message & { at: number[] } {
  // Concatenated, not joined: the parts (the calls carry a batch's rows as one long literal) are copied once, when
  // the driver writes the message, instead of once more into a joined string first.
  let text = '';
  let count = 0;
  const prepares: string[] = [];
  const at: number[] = [];
  const add = (statement: string) => {
    text = count === 0 ? statement : `${text}; ${statement}`;
    count++;
  };
  for (const part of parts) {
    if (typeof part !== 'string' && !prepared.has(part.name) && !prepares.includes(part.name)) {
      add(part.prepare);
      prepares.push(part.name);
    }
    at.push(count);
    add(typeof part === 'string' ? part : part.execute);
  }
  return { text, prepares, at };
}

/**
 * Sends `parts` (plain statements and prepared calls) as one message on `send`, and answers the rows of each part,
 * in order: the `PREPARE`s a connection still needs are left out.
 */
export async function sendParts(send: Send, parts: readonly (string | PreparedCall)[]): Promise<unknown[][]> {
  let at: number[] = [];
  const results = await send((prepared) => {
    const message = compose(prepared, parts);
    at = message.at;
    return message;
  });
  return at.map((index) => results[index]?.rows ?? []);
}

/**
 * Sends `BEGIN`, one prepared write, the `after` statements (notifications) and `COMMIT` as one message: a whole
 * transaction in one round trip (`begin` replaces the statements that open it). Answers the rows the write returned.
 */
export async function writeRowsInOneMessage(
  session: Session,
  write: PreparedCall,
  after: readonly string[],
  begin: readonly string[] = BEGIN,
): Promise<unknown[]> {
  const rows = await session((send) => sendParts(send, [...begin, write, ...after, 'COMMIT']));
  return rows[begin.length] ?? [];
}

/** `writeRowsInOneMessage` for a write that returns `run_id`s: answers them. */
export async function writeInOneMessage(
  session: Session,
  write: PreparedCall,
  after: readonly string[],
): Promise<Set<string>> {
  const rows = (await writeRowsInOneMessage(session, write, after)) as { run_id: string }[];
  return new Set(rows.map((row) => row.run_id));
}
