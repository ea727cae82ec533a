import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueue } from '@docket/core';
import { sqliteStore } from '@docket/store-sqlite';

const filename = join(mkdtempSync(join(tmpdir(), 'probe-')), 'p.sqlite');
const N = Number(process.argv[2] ?? 20000),
  C = Number(process.argv[3] ?? 64);
const def = { name: 'noop', version: '1' };
const p = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'producer' } });
const pt = p.define(def);
await p.ready();
let t = performance.now();
for (let i = 0; i < N; i++) await pt.start({ query: { i, pad: 'x'.repeat(80) } });
console.log('starts/s', Math.round(N / ((performance.now() - t) / 1000)));
let done = 0,
  resolve;
const all = new Promise((r) => (resolve = r));
const c = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'consumer', concurrency: C } });
c.define(def, {
  execute(ctx) {
    if (++done === N) resolve();
    return ctx.end();
  },
});
t = performance.now();
await c.ready();
await all;
console.log('processed/s (handler)', Math.round(N / ((performance.now() - t) / 1000)));
await c.close();
await p.close();
