import { createQueue } from '@docket/core';
import { type CreateRunRequest, type RunRecord, runParams } from '@docket/core/store';
import { describe, expect, it } from 'vitest';
import { tablesIn } from '../src/context.js';
import { postgresStore } from '../src/index.js';
import { insertRunsStatement } from '../src/writes/run-writes.js';
import { backendForTests, freshSchema } from './helpers.js';

describe('the insert of new runs (PostgreSQL)', () => {
  const { db } = backendForTests();

  /** Three runs of one task as `startMany` stored them, and their first history entries, on a fresh schema. */
  async function started() {
    const schema = freshSchema();
    const store = postgresStore(db().options(schema));
    const queue = createQueue({ store, runtime: { mode: 'producer' } });
    const task = queue.define({ name: 'inserted', version: '1', policy: { attempts: 4 } });
    await queue.ready();
    const ids = await task.startMany([{ query: { n: 1 } }, { query: { n: 2 } }, { query: { n: 3 }, priority: 5 }]);
    const requests: CreateRunRequest[] = [];
    for (const { runId } of ids) {
      const run = (await store.getRun('default', runId)) as RunRecord;
      const [history] = await store.getHistory('default', runId);
      requests.push({ run, history: history as CreateRunRequest['history'], maxRuns: null });
    }
    await queue.close();
    return { schema, tables: tablesIn(schema), requests };
  }

  it('sends a value every run shares once, and per row only the values that differ', async () => {
    const { schema, tables, requests } = await started();
    const statement = insertRunsStatement(tables, requests);
    const rows = statement.params.filter((p): p is string => typeof p === 'string' && p.startsWith('[{'));
    const runsRows = JSON.parse(rows[0] as string) as Record<string, unknown>[];
    expect(runsRows).toHaveLength(3);
    const perRow = Object.keys(runsRows[0] as object);
    expect(perRow).toEqual(expect.arrayContaining(['run_id', 'query', 'priority']));
    for (const shared of ['namespace', 'task_name', 'task_version', 'definition_hash', 'status', 'policy', 'events']) {
      expect(perRow).not.toContain(shared);
    }
    // The policy and the definition's hash travel once each, as parameters of their own.
    const policy = JSON.stringify((requests[0] as CreateRunRequest).run.policy);
    expect(statement.params.filter((p) => p === policy)).toHaveLength(1);
    await db().query(`DROP SCHEMA "${schema}" CASCADE`);
  });

  it('inserts every column of every run as given', async () => {
    const { schema, tables, requests } = await started();
    const fresh = requests.map((request, i) => {
      const runId = `${request.run.runId.slice(0, 24)}ffffff0${i}`;
      return { ...request, run: { ...request.run, runId }, history: { ...request.history } };
    });
    const statement = insertRunsStatement(tables, fresh);
    const inserted = await db().query<{ run_id: string }>(statement.text, [...statement.params]);
    expect(inserted.map((row) => row.run_id).sort()).toEqual(fresh.map((request) => request.run.runId).sort());
    for (const request of fresh) {
      const [stored] = await db().query<Record<string, unknown>>(`SELECT * FROM ${tables.runs} WHERE run_id = $1`, [
        request.run.runId,
      ]);
      const expected = runParams(request.run) as unknown as Record<string, unknown>;
      for (const [column, value] of Object.entries(expected)) {
        const got = stored?.[column];
        const same = typeof got === 'object' && got !== null ? JSON.stringify(got) : got;
        expect([column, same === null ? null : String(same)]).toEqual([column, value === null ? null : String(value)]);
      }
      const [entry] = await db().query<{ reason: string }>(`SELECT reason FROM ${tables.history} WHERE run_id = $1`, [
        request.run.runId,
      ]);
      expect(entry?.reason).toBe('STARTED');
    }
    await db().query(`DROP SCHEMA "${schema}" CASCADE`);
  });
});
