import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const variant = process.argv[2] ?? 'as-is';
const pragmas = (process.argv[3] ?? '').split(',').filter(Boolean);
const db = new Database(join(mkdtempSync(join(tmpdir(), 'sp-')), 'r.sqlite'));
for (const p of pragmas) db.pragma(p);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
let ddl = readFileSync(new URL('../../../packages/store-sqlite/drizzle/0000_init.sql', import.meta.url), 'utf8').split(
  '--> statement-breakpoint',
);
if (variant === 'norowid')
  ddl = ddl.map((s) =>
    s.includes('CREATE TABLE `docket_runs`') || s.includes('CREATE TABLE `docket_history`')
      ? s.trim().replace(/\);$/, ') WITHOUT ROWID;')
      : s,
  );
if (variant === 'both')
  ddl = ddl
    .filter((s) => !s.includes('docket_runs_list') && !s.includes('docket_runs_retention'))
    .map((s) =>
      s.includes('CREATE TABLE `docket_runs`') || s.includes('CREATE TABLE `docket_history`')
        ? s.trim().replace(/\);$/, ') WITHOUT ROWID;')
        : s,
    );
if (variant === 'fewidx')
  ddl = ddl.filter((s) => !s.includes('docket_runs_list') && !s.includes('docket_runs_retention'));
for (const s of ddl) db.exec(s);
const cols = [
  'run_id',
  'namespace',
  'task_name',
  'task_version',
  'definition_hash',
  'status',
  'reason',
  'query',
  'state',
  'page',
  'page_failures',
  'business_failures',
  'scheduled_retries',
  'recoveries',
  'error',
  'revision',
  'trigger',
  'due_at',
  'claim_due_at',
  'deadline_at',
  'model_call_limit',
  'model_calls_used',
  'idempotency_key',
  'input_hash',
  'policy',
  'events',
  'recovery',
  'fence',
  'lease_owner',
  'lease_token',
  'lease_expires_at',
  'created_at',
  'updated_at',
];
const ins = db.prepare(`INSERT INTO docket_runs (${cols}) VALUES (${cols.map((c) => '@' + c)})`);
const hist = db.prepare(
  'INSERT INTO docket_history (run_id, seq, at, from_status, to_status, reason, actor, detail) VALUES (?, 1, ?, NULL, ?, ?, ?, NULL)',
);
const tx = db.transaction((row) => {
  ins.run(row);
  hist.run(row.run_id, 'now', 'pending', 'STARTED', 'producer');
});
const N = 20000;
const t = performance.now();
for (let i = 0; i < N; i++) {
  const now = Date.now();
  const id =
    now.toString(16).padStart(12, '0') +
    Math.random().toString(16).slice(2, 12).padEnd(10, '0') +
    (i % 1e10).toString(16).padStart(10, '0');
  tx.immediate({
    run_id: id.slice(0, 32),
    namespace: 'default',
    task_name: 'noop',
    task_version: '1',
    definition_hash: 'a'.repeat(64),
    status: 'pending',
    reason: 'STARTED',
    query: JSON.stringify({ i, pad: 'x'.repeat(80) }),
    state: null,
    page: 1,
    page_failures: 0,
    business_failures: 0,
    scheduled_retries: 0,
    recoveries: 0,
    error: null,
    revision: 1,
    trigger: null,
    due_at: now,
    claim_due_at: now,
    deadline_at: null,
    model_call_limit: null,
    model_calls_used: 0,
    idempotency_key: null,
    input_hash: 'b'.repeat(64),
    policy: '{"attempts":3,"timeoutMs":30000,"backoff":{"baseMs":1000,"maxMs":30000,"jitter":"full"}}',
    events: '[]',
    recovery: 'automatic',
    fence: 0,
    lease_owner: null,
    lease_token: null,
    lease_expires_at: null,
    created_at: now,
    updated_at: now,
  });
}
console.log(variant, pragmas.join(','), 'docket-shaped insert txn/s', Math.round(N / ((performance.now() - t) / 1000)));
