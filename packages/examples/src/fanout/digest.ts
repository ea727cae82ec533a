import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChildOutcome, createQueue, type ModelProvider, type Store } from '@docket/core';
import { httpProvider } from '@docket/provider-http';
import { startLocalModel } from '@docket/provider-http/testing';
import { postgresStore } from '@docket/store-postgres';
import { sqliteStore } from '@docket/store-sqlite';
import Database from 'better-sqlite3';
import { type DigestSink, postgresSink, sqliteSink } from './sinks.js';

/** Options of the fan-out example. */
export interface FanoutOptions {
  /** The SQLite file for Docket and the digests (kept, and found again when run again); default a temporary file. */
  filename?: string;
  /** Keep Docket's runs and the digests in PostgreSQL instead. */
  databaseUrl?: string;
  /** With `databaseUrl`: the schema; default `docket`. */
  schema?: string;
  /** How many documents to summarise, one child run each; default 6. */
  documents?: number;
}

/** What the example reports. */
export interface FanoutResult {
  runId: string;
  /** `false` when the idempotency key found the digest run of an earlier time: nothing ran again. */
  created: boolean;
  status: string;
  children: { total: number; settled: number };
  /** The summaries the parent's last page gathered from its children. */
  summaries: number;
  /** Digest rows the parent's last commit wrote (1 once it succeeded). */
  digests: number;
  /** Requests the local model answered in this run of the example. */
  modelRequests: number;
  /**
   * The most children first claimed (each one's model call follows its first claim) in any one second: the group's
   * rate limit keeps it at 3 or fewer, whatever the number of workers.
   */
  busiestSecond: number;
}

/** The documents to summarise: made up, so the example runs offline. */
function documents(count: number): { docId: string; title: string; text: string }[] {
  return Array.from({ length: count }, (_, i) => ({
    docId: `doc-${i + 1}`,
    title: `Release note ${i + 1}`,
    text: `Change ${i + 1}: runs survive a crash and resume where they stopped (${'detail '.repeat(i + 1).trim()}).`,
  }));
}

/** What a `summarize` child commits: its document and the model's summary. */
interface Summary {
  docId: string;
  summary: string;
}

/**
 * The fan-out example: a `digest` run's first page starts one `summarize` child per document (all in one group,
 * whose rate limit keeps the model to 3 requests a second across every worker), and waits without holding a worker.
 * Each child asks the local model for a summary and commits it as its state. Once the last child settles the parent
 * is due again; its next page reads every child's outcome (`ctx.children`) and ends, writing the digest row in the
 * same commit.
 */
export async function runFanout(options: FanoutOptions = {}): Promise<FanoutResult> {
  const temporary = options.filename === undefined && !options.databaseUrl;
  const dir = temporary ? mkdtempSync(join(tmpdir(), 'docket-fanout-')) : null;
  const local = await startLocalModel();
  const model = httpProvider({ kind: 'openai-compatible', baseUrl: local.baseUrl, model: 'local', name: 'local' });
  let db: Database.Database | null = null;
  let store: Store;
  let sink: DigestSink<never>;
  if (options.databaseUrl) {
    const schema = options.schema ?? 'docket';
    sink = (await postgresSink(options.databaseUrl, schema)) as DigestSink<never>;
    store = postgresStore({ connectionString: options.databaseUrl, schema });
  } else {
    db = new Database(options.filename ?? join(dir as string, 'fanout.sqlite'));
    sink = sqliteSink(db) as DigestSink<never>;
    store = sqliteStore({ database: db });
  }
  const queue = createQueue({ store, protocol: { pollMs: 20 } });
  const { digest } = defineDigestTasks(queue, model, sink);
  try {
    await queue.ready();
    const { runId, created } = await digest.start({
      query: { documents: options.documents ?? 6 },
      idempotencyKey: `digest-${options.documents ?? 6}`,
    });
    const info = await digest.wait(runId, { timeoutMs: 120_000 });
    return {
      runId,
      created,
      status: info?.status ?? 'missing',
      children: info?.children ?? { total: 0, settled: 0 },
      ...(await sink.count(runId)),
      modelRequests: local.requestCount,
      busiestSecond: busiestWindow(await firstClaims(queue, runId), 1000),
    };
  } finally {
    await queue.close();
    await sink.close();
    await local.close();
    db?.close();
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
  }
}

/** The two tasks: `summarize` (one document, one model call) and `digest` (the parent that fans out and in). */
function defineDigestTasks(queue: ReturnType<typeof createQueue>, model: ModelProvider, sink: DigestSink<never>) {
  const summarize = queue.define<{ docId: string; title: string; text: string }, Summary>(
    { name: 'summarize', version: '1', flow: { group: { rate: { max: 3, perMs: 1000 } } } },
    {
      async execute(ctx) {
        if (ctx.page > 1) return ctx.end();
        const answer = await ctx.callModel(model, {
          messages: [{ role: 'user', content: `Summarise in one line: ${ctx.query.title}\n${ctx.query.text}` }],
          maxTokens: 100,
        });
        return ctx.next({ docId: ctx.query.docId, summary: answer.text });
      },
    },
  );
  const digest = queue.define<{ documents: number }, null>(
    { name: 'digest', version: '1' },
    {
      execute(ctx) {
        if (ctx.page === 1) {
          const children = documents(ctx.query.documents).map((doc) => ({
            task: summarize,
            query: doc,
            group: 'local-model',
          }));
          return ctx.next(null, { children });
        }
        // The page after the children settled: their outcomes, in the order given; the digest is this last commit's.
        const summaries = gathered(ctx.children);
        return ctx.end({ effect: (tx) => sink.write(tx as never, { runId: ctx.runId, summaries }) });
      },
    },
  );
  return { summarize, digest };
}

/** When each child of `parentRunId` was first claimed (epoch ms), from its history. */
async function firstClaims(queue: ReturnType<typeof createQueue>, parentRunId: string): Promise<number[]> {
  const times: number[] = [];
  let cursor: string | undefined;
  do {
    const slice = await queue.operator.runs.list({ parentRunId, limit: 200, ...(cursor ? { cursor } : {}) });
    for (const child of slice.items) {
      const claimed = (await queue.operator.runs.history(child.runId)).find((entry) => entry.reason === 'CLAIMED');
      if (claimed !== undefined) times.push(Date.parse(claimed.at));
    }
    cursor = slice.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return times;
}

/** The most of `times` (epoch ms) in any window of `perMs`. */
function busiestWindow(times: readonly number[], perMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while ((sorted[i] as number) - (sorted[j] as number) >= perMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** The summaries of the children that succeeded, in the order the documents were given. */
function gathered(children: readonly ChildOutcome[]): Summary[] {
  return children.filter((child) => child.status === 'success').map((child) => child.state as unknown as Summary);
}
