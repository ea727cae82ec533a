import { createQueue } from '@docket/core';
import { postgresStore } from '@docket/store-postgres';
import pg from 'pg';

const url = 'postgres://postgres@127.0.0.1:5432/test';
const [phase, schema, nArg, concArg] = process.argv.slice(2);
const n = Number(nArg ?? 5000),
  concurrency = Number(concArg ?? 256);
const payload = (i) => ({ i, pad: 'x'.repeat(80) });
const def = { name: 'noop', version: '1' };
if (phase === 'fill') {
  const q = createQueue({ store: postgresStore({ connectionString: url, schema }), runtime: { mode: 'producer' } });
  const t = q.define(def);
  await q.ready();
  const t0 = performance.now();
  for (let i = 0; i < n; i += 500) {
    const b = [];
    for (let j = i; j < Math.min(n, i + 500); j++) b.push(t.start({ query: payload(j) }));
    await Promise.all(b);
  }
  console.log('enqueue/s', Math.round(n / ((performance.now() - t0) / 1000)));
  await q.close();
} else if (phase === 'run') {
  let done = 0,
    fin;
  const finished = new Promise((r) => (fin = r));
  const q = createQueue({
    store: postgresStore({ connectionString: url, schema }),
    runtime: { mode: 'consumer', concurrency },
  });
  q.define(def, {
    execute(ctx) {
      if (++done === n) fin();
      return ctx.end();
    },
  });
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await q.ready();
  await finished;
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  console.log('processed/s', Math.round(n / (ms / 1000)), 'node cpu %', Math.round((c.user + c.system) / 10 / ms));
  await q.close();
} else {
  const c = new pg.Client(url);
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await c.end();
}
