import { memoryStore } from '../src/store/index.js';
import { runStoreConformance } from '../src/testing/conformance.js';

for (const asyncTransactions of [false, true]) {
  runStoreConformance(`memory (asyncTransactions: ${asyncTransactions})`, async () => {
    const store = memoryStore({ asyncTransactions });
    return {
      store,
      secondStore: () => store,
      writeAppRow: (tx, key) => tx.put('app_rows', `${key}:${Math.random()}`, key),
      countAppRows: async (key) => [...store.raw.appRows('app_rows').values()].filter((v) => v === key).length,
      raw: {
        run: async (runId) => {
          const run = store.raw.run('default', runId);
          return run ? { status: run.status, revision: run.revision } : null;
        },
        historyCount: async (runId) => store.raw.history('default', runId).length,
      },
      cleanup: async () => {},
    };
  });
}
