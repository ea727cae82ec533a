import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueue } from '@docket/core';
import { waitForStatus } from '@docket/core/testing';
import { sqliteStore } from '@docket/store-sqlite';
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { httpProvider } from '../src/index.js';
import { startLocalModel } from '../src/testing/index.js';

describe('a Docket run calling the local model over HTTP', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  it('calls the model through ctx.callModel on SQLite and commits the answer in its effect', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docket-e2e-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const local = await startLocalModel();
    cleanups.push(() => local.close());
    const db = new Database(join(dir, 'app.sqlite'));
    cleanups.push(() => db.close());
    db.exec('CREATE TABLE notices (run_id TEXT PRIMARY KEY, body TEXT NOT NULL)');
    const model = httpProvider({ kind: 'openai-compatible', baseUrl: local.baseUrl, model: 'local' });
    const queue = createQueue({ store: sqliteStore({ database: db }), protocol: { pollMs: 10 } });
    cleanups.push(() => queue.close());
    const release = { id: 'REL-7', title: 'Docket 0.7', revision: 2, change: 'Adds callbacks.' };
    const task = queue.define<typeof release>(
      { name: 'notice', version: '1', limits: { modelCalls: 1 } },
      {
        async execute(ctx) {
          const answer = await ctx.callModel(model, {
            messages: [{ role: 'user', content: `Write a release notice as JSON for ${JSON.stringify(ctx.query)}` }],
            responseFormat: 'json',
          });
          const notice = JSON.parse(answer.text) as { body: string };
          return ctx.end({
            effect: (tx) => tx.run(sql`INSERT INTO notices (run_id, body) VALUES (${ctx.runId}, ${notice.body})`),
          });
        },
      },
    );
    await queue.ready();
    const { runId } = await task.start({ query: release });
    const info = await waitForStatus(task, runId, 'success');
    expect(info.limits.modelCalls).toEqual({ limit: 1, used: 1 });
    expect(local.requestCount).toBe(1);
    expect(db.prepare('SELECT body FROM notices WHERE run_id = ?').get(runId)).toEqual({
      body: 'Docket 0.7 (revision 2) is ready. Adds callbacks.',
    });
  });
});
