import type { BatchTask, CheckResult, ModelProvider, Queue } from '@docket/core';
import type { SqliteTransaction } from '@docket/store-sqlite';
import { eq } from 'drizzle-orm';
import { type AppStore, type Notice, notices, type Release, releases } from './app-store.js';

/** A run's query: which release, at which revision, for which task directory. */
export interface NoticeQuery {
  taskId: string;
  releaseId: string;
  revision: number;
}

/** The task every flow runs: generate a release notice with a model, register it in the commit transaction. */
export const NOTICE_TASK = {
  name: 'release-notice',
  version: '1',
  policy: { attempts: 1, timeoutMs: 120_000 },
  recovery: 'manual',
} as const;

/** The prompt: the release as JSON and the notice shape asked for. */
export function noticePrompt(release: Release) {
  return [
    {
      role: 'system' as const,
      content:
        'You write short release notices. Answer with JSON only: {"releaseId": string, "revision": number, "title": string, "body": string}. The body must contain the change sentence exactly.',
    },
    { role: 'user' as const, content: `Release: ${JSON.stringify({ release })}` },
  ];
}

/** Why a notice cannot be registered for this release, or `null` when it can. */
export function noticeProblem(notice: unknown, release: Release): string | null {
  const n = notice as Partial<Notice> | null;
  if (n === null || typeof n !== 'object') return 'the notice is not an object';
  if (n.releaseId !== release.id) return 'the notice names another release';
  if (n.revision !== release.revision) return 'the notice names another revision';
  if (n.title !== release.title) return 'the notice has another title';
  if (typeof n.body !== 'string' || !n.body.includes(release.change))
    return 'the notice body lacks the change sentence';
  return null;
}

/** Whether the release is ready at the revision recorded when the run was created. */
function readiness(tx: SqliteTransaction, query: NoticeQuery): CheckResult {
  const release = tx.select().from(releases).where(eq(releases.id, query.releaseId)).get();
  if (!release) return { ok: false, reason: 'release not found' };
  if (release.status !== 'ready')
    return {
      ok: false as const,
      reason: `release is ${release.status}`,
      detail: { status: release.status, revision: release.revision },
    };
  if (release.revision !== query.revision) {
    return {
      ok: false as const,
      reason: 'release revision changed',
      detail: { expected: query.revision, actual: release.revision },
    };
  }
  return { ok: true };
}

/** Defines the notice task on `queue`; `model()` gives the provider the flow chose. */
export function defineNoticeTask(
  queue: Queue<SqliteTransaction>,
  app: AppStore,
  model: () => ModelProvider,
): BatchTask<NoticeQuery, null> {
  return queue.define<NoticeQuery, null>(NOTICE_TASK, {
    check: ({ query, tx }) => readiness(tx, query),
    validateEvent({ query, event }) {
      const payload = (event.payload ?? {}) as Partial<{
        taskId: string;
        releaseId: string;
        revision: number;
        malformed: string;
      }>;
      if (payload.malformed !== undefined) return `malformed event file: ${payload.malformed}`;
      if (payload.taskId !== query.taskId) return 'event is for another task';
      if (payload.releaseId !== query.releaseId) return 'event is for another release';
      if (payload.revision !== query.revision) return 'event is for another revision';
      return true;
    },
    async execute(ctx) {
      const release = app.getRelease(ctx.query.releaseId);
      if (!release) throw new Error(`release ${ctx.query.releaseId} is gone`);
      const answer = await ctx.callModel(model(), {
        messages: noticePrompt(release),
        responseFormat: 'json',
        maxTokens: 400,
      });
      const notice = JSON.parse(answer.text) as Notice;
      const problem = noticeProblem(notice, release);
      if (problem) throw Object.assign(new Error(problem), { code: 'NOTICE_INVALID' });
      return ctx.end({
        effect: (tx) => {
          tx.insert(notices)
            .values({
              runId: ctx.runId,
              releaseId: notice.releaseId,
              revision: notice.revision,
              title: notice.title,
              body: notice.body,
              createdAt: new Date().toISOString(),
            })
            .run();
        },
      });
    },
  });
}
