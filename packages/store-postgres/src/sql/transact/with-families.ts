import type { OutcomeTracker } from '../../errors.js';
import { notifyText, type PreparedCall } from '../../wire/prepared-calls.js';
import { BEGIN, type Session, sendParts } from '../../wire/session.js';
import { commitCounting, familyWrites, followFamilies, onSession } from '../../writes/family.js';
import { type PendingWrite, type Tables, wakeNamespaces } from '../../writes/run-writes.js';

/**
 * The guarded writes when some of them settle children (or end a parent), on one connection: `BEGIN` and the write
 * first. When the writes that landed can only count their parents, the counts, the notifications and the COMMIT
 * follow in one message (`commitCounting`). Otherwise, or when a count would reach its parent's total, what the writes
 * lead to is walked (`followFamilies`: parents counted, one statement per parent, and moved when the count calls for
 * it) before the notifications and the COMMIT. Answers the ids that landed. A failure before the COMMIT is sent
 * commits nothing: every call then goes to the ordinary path.
 */
export async function writeWithFamilies(
  session: Session,
  tables: Tables,
  guarded: readonly PendingWrite[],
  write: PreparedCall,
  outcome: OutcomeTracker,
): Promise<Set<string>> {
  return session(async (send) => {
    const results = await sendParts(send, [...BEGIN, write]);
    const landed = new Set((results[BEGIN.length] as { run_id: string }[]).map((row) => row.run_id));
    const family = familyWrites(guarded, landed);
    const notify = (wake: Iterable<string>) => [...wake].map((ns) => notifyText(tables.channel, ns));
    const wake = wakeNamespaces(guarded, landed);
    if (await commitCounting(send, tables, family, [...notify(wake), 'COMMIT'], outcome)) return landed;
    for (const namespace of await followFamilies(onSession(send), tables, family)) wake.add(namespace);
    outcome.committing();
    await sendParts(send, [...notify(wake), 'COMMIT']);
    return landed;
  });
}
