import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueue, type Queue } from '@docket/core';
import { sqliteStore } from '@docket/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docketIn } from './in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'docket-cli-run-now-'));
const db = join(dir, 'docket.sqlite');
let api: Queue;

/** Runs the CLI in this process on the test's file. */
const docket = (argv: string[]) => docketIn(dir, db, argv);

beforeAll(async () => {
  api = createQueue({ store: sqliteStore({ filename: db }), logger: false, runtime: { mode: 'producer' } });
  const digest = api.define({ name: 'digest', version: '1' });
  await api.ready();
  await digest.schedule('weekday-digest', { cron: '0 9 * * MON-FRI', query: { digest: 'daily' } });
  await digest.schedule('weekly-digest', { cron: '0 9 * * MON', query: { digest: 'weekly' } });
});

afterAll(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('docket schedules run-now', () => {
  it('starts one run of the schedule per command id, and runs list --schedule lists it', async () => {
    expect((await docket(['schedules', 'run-now', 'weekday-digest'])).code).toBe(2);
    const started = await docket(['--json', 'schedules', 'run-now', 'weekday-digest', '--reason', 'resend']);
    expect(started.code).toBe(0);
    const answer = JSON.parse(started.out) as { kind: string; runId: string; commandId: string };
    expect(answer).toMatchObject({ kind: 'applied', id: 'weekday-digest' });
    const run = await api.operator.runs.get(answer.runId);
    expect(run).toMatchObject({ query: { digest: 'daily' }, trigger: { schedule: 'weekday-digest' } });
    const again = ['schedules', 'run-now', 'weekday-digest', '--reason', 'resend', '--command-id', answer.commandId];
    expect((await docket(again)).out).toBe(
      `started run ${answer.runId} of schedule weekday-digest (command id ${answer.commandId})`,
    );
    const second = JSON.parse((await docket(['--json', ...again.slice(0, 5)])).out) as { runId: string };
    expect(second.runId).not.toBe(answer.runId);
    const listed = await docket(['--json', 'runs', 'list', '--task', 'digest', '--schedule', 'weekday-digest']);
    const ids = (JSON.parse(listed.out) as { items: { runId: string }[] }).items.map((r) => r.runId);
    expect(ids.sort()).toEqual([answer.runId, second.runId].sort());
    const weekly = await docket(['--json', 'runs', 'list', '--task', 'digest', '--schedule', 'weekly-digest']);
    expect(JSON.parse(weekly.out).items).toEqual([]);
    expect(await docket(['runs', 'list', '--schedule', 'weekday-digest'])).toMatchObject({ code: 2 });
    const missing = await docket(['schedules', 'run-now', 'nope', '--reason', 'x']);
    expect(missing).toMatchObject({ code: 1, out: 'no schedule nope' });
  });
});
