import { describe, expect, it } from 'vitest';
import { createQueue, memoryStore, type SelectRequest, type Store } from '../src/index.js';
import { waitForStatus } from '../src/testing/harness.js';

describe('the worker loop', () => {
  it('executes only the runs claimDue answers, not every row it showed the plan', async () => {
    const store = memoryStore();
    const definition = { name: 'shown', version: '1' };
    const producer = createQueue({ store, runtime: { mode: 'producer' } });
    const task = producer.define(definition);
    await producer.ready();
    const { runId } = await task.start({ query: 1 });

    // A store that, once, shows the plan a row it then does not write (as a store claiming from a remembered row
    // that has moved would), and answers no runs.
    let shown = 0;
    const showing: Store = Object.assign(Object.create(store) as Store, {
      async claimDue(request: SelectRequest) {
        if (shown === 0) {
          const row = await store.getRun(request.namespace, runId);
          if (row !== null && request.plan(row) !== null) shown++;
          if (shown > 0) return [];
        }
        return store.claimDue(request);
      },
    });
    const executions: string[] = [];
    const consumer = createQueue({ store: showing, runtime: { mode: 'consumer', concurrency: 2 } });
    consumer.define(definition, {
      execute(ctx) {
        executions.push(ctx.runId);
        return ctx.end();
      },
    });
    try {
      await consumer.ready();
      await waitForStatus(task, runId, 'success');
      expect(shown).toBe(1);
      // Once, from the claim that was written; the plan shown first claimed nothing.
      expect(executions).toEqual([runId]);
      expect((await task.history(runId)).map((h) => h.reason)).toEqual(['STARTED', 'CLAIMED', 'COMPLETED']);
    } finally {
      await consumer.close();
      await producer.close();
    }
  });
});
