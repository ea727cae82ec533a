import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { DATABASE_URL, dropSchema, freshSchema, serverProducer } from './helpers.js';

// auto_explain is loaded per session: only a superuser on the real server (.ci/run provides it) may do that.
describe.runIf(DATABASE_URL)('the count trigger of the runs table', () => {
  it('joins a write of many runs without a nested loop, also on a connection whose first write was one run', async () => {
    const schema = freshSchema();
    const producer = await serverProducer(schema, { name: 'counted', version: '1' });
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      await producer.task.startMany(Array.from({ length: 300 }, (_, i) => ({ query: { i } })));
      const plans: string[] = [];
      client.on('notice', (notice) => plans.push(notice.message ?? ''));
      await client.query(`SET search_path TO "${schema}"`);
      await client.query("LOAD 'auto_explain'");
      for (const setting of ['log_min_duration = 0', 'log_nested_statements = on', "log_level = 'notice'"]) {
        await client.query(`SET auto_explain.${setting}`);
      }
      // The connection's first write moves one run: PL/pgSQL plans the trigger's join for that count, once.
      const [first] = (await client.query('SELECT run_id FROM docket_runs ORDER BY run_id LIMIT 1')).rows;
      await client.query("UPDATE docket_runs SET status = 'cancelled' WHERE run_id = $1", [first.run_id]);
      plans.length = 0;
      await client.query("UPDATE docket_runs SET status = 'cancelled' WHERE status <> 'cancelled'");
      const joins = plans.filter((plan) => /INSERT INTO docket_(run_counts|settled_minutes)/.test(plan));
      expect(joins).toHaveLength(2);
      for (const plan of joins) {
        expect(plan).toMatch(/Hash Join/);
        expect(plan).not.toMatch(/Nested Loop/);
      }
      const counts = await client.query(
        "SELECT status, sum(n)::int AS n FROM docket_run_counts WHERE task_name = 'counted' GROUP BY status HAVING sum(n) <> 0",
      );
      expect(counts.rows).toEqual([{ status: 'cancelled', n: 300 }]);
    } finally {
      await client.end();
      await producer.queue.close();
      await dropSchema(DATABASE_URL as string, schema);
    }
  });
});
