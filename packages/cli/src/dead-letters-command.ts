import type { Operator } from '@docket/core';
import { table } from './format.js';
import { DEFAULT_REPLAY_REASON } from './usage.js';

/** What the `dead-letters` commands read of the parsed flags. */
export interface DeadLetterFlags {
  limit: number | undefined;
  cursor?: string | undefined;
  reason?: string | undefined;
  expectedRevision: number | undefined;
  'command-id'?: string | undefined;
}

/** `docket dead-letters list|replay`: answers the exit code; `print` writes JSON or the human text. */
export async function deadLettersCommand(
  op: Operator,
  command: string,
  id: string,
  o: DeadLetterFlags,
  print: (value: unknown, human: () => string) => void,
): Promise<number> {
  switch (command) {
    case 'dead-letters list': {
      const page = await op.deadLetters.list({
        ...(o.limit === undefined ? {} : { limit: o.limit }),
        ...(o.cursor ? { cursor: o.cursor } : {}),
      });
      print(page, () => {
        if (page.items.length === 0) return 'no dead letters';
        const lines = [
          table(
            ['EVENT', 'RUN', 'KIND', 'ATTEMPTS', 'DEAD AT', 'REVISION', 'ERROR'],
            page.items.map((d) => [
              d.eventId,
              d.runId,
              d.kind,
              String(d.deliveryAttempt),
              d.deadAt,
              String(d.revision),
              d.error ? `${d.error.code}: ${d.error.message}` : '',
            ]),
          ),
        ];
        if (page.nextCursor) lines.push(`more: --cursor ${page.nextCursor}`);
        return lines.join('\n');
      });
      return 0;
    }
    case 'dead-letters replay': {
      let expectedRevision = o.expectedRevision;
      if (expectedRevision === undefined) {
        let cursor: string | undefined;
        do {
          const page = await op.deadLetters.list({ limit: 200, ...(cursor ? { cursor } : {}) });
          expectedRevision = page.items.find((d) => d.eventId === id)?.revision;
          cursor = page.nextCursor ?? undefined;
        } while (expectedRevision === undefined && cursor);
        if (expectedRevision === undefined) {
          print({ kind: 'not_found', eventId: id }, () => `no dead letter ${id}`);
          return 1;
        }
      }
      const commandId = o['command-id'] ?? `cli-replay-${id}-${expectedRevision}`;
      const result = await op.deadLetters.replay({
        eventId: id,
        expectedRevision,
        reason: o.reason ?? DEFAULT_REPLAY_REASON,
        commandId,
      });
      print(result, () =>
        result.kind === 'not_found' ? `no dead letter ${id}` : `${result.kind}: event ${id} is ${result.status}`,
      );
      return result.kind === 'not_found' ? 1 : 0;
    }
    default:
      throw new Error(`internal: not a dead-letters command: ${command}`);
  }
}
