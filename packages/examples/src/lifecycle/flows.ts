import {
  createQueue,
  type HistoryEntry,
  isTerminal,
  type Json,
  type ModelProvider,
  type Queue,
  type RunInfo,
  type TriggerEvent,
} from '@docket/core';
import { httpProvider, loadProviders } from '@docket/provider-http';
import { type LocalModel, startLocalModel } from '@docket/provider-http/testing';
import { sqliteStore } from '@docket/store-sqlite';
import { type Notice, openAppStore, type Release } from './app-store.js';
import { defineNoticeTask, type NoticeQuery } from './notice-task.js';
import {
  type Application,
  createTaskDirectory,
  type FlowName,
  openTaskDirectory,
  paths,
  readInboxEvent,
  readJson,
  writeInboxEvent,
  writeJsonAtomic,
} from './task-directory.js';

/** Options every flow takes (the flags the README lists), plus what tests inject. */
export interface FlowOptions {
  /** Re-run an existing task directory instead of creating one. */
  directory?: string;
  /** Where new task directories go and where docket.yaml/.env are read; default `.examples-lifecycle-tasks` in cwd. */
  root?: string;
  cwd?: string;
  /** A configured provider name; default docket.yaml's default, else the local model. */
  provider?: string;
  ready?: boolean;
  modelCallBudget?: number;
  deadlineMs?: number;
  stop?: boolean;
  dueAt?: string;
  waitMs?: number;
  emitEvent?: boolean;
  signal?: AbortSignal;
  /** Use this running local model (tests count its requests) instead of starting one. */
  localModel?: LocalModel;
  /** Called while a scheduled or event flow waits (the CLI shows it on a terminal). */
  onWait?: (status: { waitingFor: string; msLeft: number | null }) => void;
}

/** What every flow returns and prints. */
export interface FlowOutput {
  directory: string;
  provider: string;
  result: { job: RunInfo<NoticeQuery, null>; release: Release | null; notice: Notice | null; history: HistoryEntry[] };
}

const DEFAULT_RELEASE: Omit<Release, 'id'> = {
  title: 'Docket 1.0',
  revision: 1,
  status: 'ready',
  change: 'Runs now survive a crash and resume where they stopped.',
};

async function chooseModel(
  options: FlowOptions,
): Promise<{ name: string; model: ModelProvider; stop: () => Promise<void> }> {
  const cwd = options.cwd ?? process.cwd();
  const loaded = loadProviders({ cwd });
  const name = options.provider ?? loaded.default;
  const configured = loaded.providers[name];
  if (!configured)
    throw new Error(`provider ${name} is not configured (docket.yaml, .env or DOCKET_PROVIDER_* variables)`);
  if (configured.provider) return { name, model: configured.provider, stop: async () => {} };
  const local = options.localModel ?? (await startLocalModel());
  const model = httpProvider({ kind: 'openai-compatible', baseUrl: local.baseUrl, model: 'local', name: 'local' });
  return { name: 'local', model, stop: options.localModel ? async () => {} : () => local.close() };
}

interface FlowSpec {
  flow: FlowName;
  releaseStatus: Release['status'];
  defaultBudget: number;
  trigger(
    application: Application,
    source: Release,
  ): { at: string } | { event: string; match: { [key: string]: Json } } | undefined;
  dueAt?(createdAt: number, options: FlowOptions): string | null;
  /** Runs the task for this flow once it exists. */
  execute(context: FlowContext): Promise<RunInfo<NoticeQuery, null> | null>;
}

interface FlowContext {
  options: FlowOptions;
  directory: string;
  application: Application;
  runId: string;
  task: ReturnType<typeof defineNoticeTask>;
  deliver: (event: TriggerEvent) => Promise<unknown>;
}

async function runFlow(spec: FlowSpec, options: FlowOptions): Promise<FlowOutput> {
  let { directory, application } = openOrCreateDirectory(spec, options);
  const files = paths(directory);
  const source = readJson<{ release: Release }>(files.source).release;
  const app = openAppStore(files.database);
  const chosen = await chooseModel(options);
  const queue = createQueue({
    store: sqliteStore({ database: app.database }),
    // task.run is this process's only executor: a one-shot consumer, as the flows are.
    runtime: { concurrency: 0, closeGraceMs: 5000 },
    protocol: { pollMs: 50 },
  });
  const task = defineNoticeTask(queue, app, () => chosen.model);
  try {
    await queue.ready();
    if (application.runId === null) {
      application = await startNotice(spec, task, app, source, application);
      writeJsonAtomic(files.application, application);
    }
    const runId = application.runId as string;
    if (options.ready) app.setReleaseStatus(source.id, 'ready');
    if (options.stop) await stopRun(queue, task, runId);
    const current = await task.get(runId);
    const job =
      current && isTerminal(current.status)
        ? current // a finished task is never run again: no model call, no second notice
        : await spec.execute({
            options,
            directory,
            application,
            runId,
            task,
            deliver: (event) => queue.events.deliver(runId, event),
          });
    const final = (await task.get(runId)) ?? job;
    if (!final) throw new Error(`run ${runId} is missing from ${files.database}`);
    const output: FlowOutput = {
      directory,
      provider: chosen.name,
      result: {
        job: final,
        release: app.getRelease(source.id),
        notice: app.noticeFor(runId),
        history: await task.history(runId),
      },
    };
    writeJsonAtomic(files.result, output.result);
    return output;
  } finally {
    await queue.close();
    app.close();
    await chosen.stop();
  }
}

/** The task directory `--directory` names, or a new one for this flow (with its budget, deadline and due time). */
function openOrCreateDirectory(spec: FlowSpec, options: FlowOptions): { directory: string; application: Application } {
  if (options.directory) {
    return { directory: options.directory, application: openTaskDirectory(options.directory, spec.flow) };
  }
  const cwd = options.cwd ?? process.cwd();
  const root = options.root ?? `${cwd}/.examples-lifecycle-tasks`;
  const createdAt = Date.now();
  const budget = options.modelCallBudget ?? spec.defaultBudget;
  return createTaskDirectory(
    root,
    spec.flow,
    { id: '', ...DEFAULT_RELEASE, status: spec.releaseStatus },
    {
      limits: { modelCalls: budget, deadlineMs: options.deadlineMs ?? null },
      dueAt: spec.dueAt?.(createdAt, options) ?? null,
    },
  );
}

/** Stores the release and starts the notice run of a new task directory; answers the application with its run id. */
async function startNotice(
  spec: FlowSpec,
  task: ReturnType<typeof defineNoticeTask>,
  app: ReturnType<typeof openAppStore>,
  source: Release,
  application: Application,
): Promise<Application> {
  app.putRelease(source);
  const query: NoticeQuery = { taskId: application.taskId, releaseId: source.id, revision: source.revision };
  const trigger = spec.trigger(application, source);
  const limits = {
    ...(application.limits.modelCalls === null ? {} : { modelCalls: application.limits.modelCalls }),
    ...(application.limits.deadlineMs === null
      ? {}
      : { deadlineAt: new Date(Date.parse(application.createdAt) + application.limits.deadlineMs) }),
  };
  const { runId } = await task.start({
    query,
    idempotencyKey: application.taskId,
    ...(trigger ? { trigger } : {}),
    limits,
  });
  return { ...application, runId };
}

/** `--stop`: a trusted controller cancels the run through the operator API, unless it has finished. */
async function stopRun(queue: Queue, task: ReturnType<typeof defineNoticeTask>, runId: string): Promise<void> {
  const current = await task.get(runId);
  if (!current || isTerminal(current.status)) return;
  await queue.operator.runs.cancel({
    runId,
    expectedRevision: current.revision,
    reason: 'stop requested by a trusted controller (--stop)',
    commandId: `stop-${runId}`,
  });
}

/**
 * Waits for a scheduled or event-triggered run within `waitMs`, telling `onWait` what it waits for. A stop (Ctrl-C,
 * SIGTERM) while the run still waits ends this consumer and leaves the run `waiting`, so that a restarted consumer
 * continues it (the seed: the waiting phase is continued by restarting the consumer); once the run is no longer
 * waiting, the stop cancels its execution as in every flow.
 */
async function waitAndRun(
  context: FlowContext,
  waitMs: number,
  waitingFor: () => string,
  beforeEach?: () => Promise<void>,
) {
  const { task, runId, options } = context;
  const end = Date.now() + waitMs;
  for (;;) {
    await beforeEach?.();
    const remaining = Math.max(0, end - Date.now());
    const waiting = (await task.get(runId))?.status === 'waiting';
    if (waiting && options.signal?.aborted) return task.get(runId);
    const info = await task.run(runId, {
      waitMs: Math.min(remaining, 100),
      // The caller's signal reaches the run only past its wait: aborted, task.run cancels the run for good.
      ...(options.signal && !waiting ? { signal: options.signal } : {}),
    });
    if (info?.status !== 'waiting' || remaining === 0 || options.signal?.aborted) return info;
    const dueAt = info.dueAt === null ? null : Date.parse(info.dueAt);
    options.onWait?.({ waitingFor: waitingFor(), msLeft: dueAt === null ? null : Math.max(0, dueAt - Date.now()) });
  }
}

const run = (context: FlowContext) =>
  context.task.run(context.runId, context.options.signal ? { signal: context.options.signal } : {});

/** Status tracking: generates the notice, registers it in the commit transaction, `success`. */
export function runStatusTracking(options: FlowOptions = {}): Promise<FlowOutput> {
  return runFlow(
    { flow: 'tracking', releaseStatus: 'ready', defaultBudget: 1, trigger: () => undefined, execute: run },
    options,
  );
}

/** State check: the release is `draft`, so the run is `blocked` (`BUSINESS_STATE`) before any model call. */
export function runStateCheck(options: FlowOptions = {}): Promise<FlowOutput> {
  return runFlow(
    { flow: 'state', releaseStatus: 'draft', defaultBudget: 1, trigger: () => undefined, execute: run },
    options,
  );
}

/** Safe stop: with a model-call budget of 0 the run is `cancelled` / `MODEL_CALL_BUDGET` and no request is sent. */
export function runSafeStop(options: FlowOptions = {}): Promise<FlowOutput> {
  return runFlow(
    { flow: 'stop', releaseStatus: 'ready', defaultBudget: 0, trigger: () => undefined, execute: run },
    options,
  );
}

/** Scheduled: due about 250 ms after creation (or `--due-at`); waits for it, then runs once. */
export function runScheduled(options: FlowOptions = {}): Promise<FlowOutput> {
  return runFlow(
    {
      flow: 'scheduled',
      releaseStatus: 'ready',
      defaultBudget: 1,
      dueAt: (createdAt, o) => (o.dueAt ? new Date(o.dueAt).toISOString() : new Date(createdAt + 250).toISOString()),
      trigger: (application) => ({ at: application.dueAt as string }),
      execute: (context) =>
        waitAndRun(context, context.options.waitMs ?? 5000, () => `the due time ${context.application.dueAt}`),
    },
    options,
  );
}

/** Event-triggered: waits for `inbox/task.json` (`--emit-event` writes one as an independent producer would). */
export function runEventTriggered(options: FlowOptions = {}): Promise<FlowOutput> {
  return runFlow(
    {
      flow: 'event',
      releaseStatus: 'ready',
      defaultBudget: 1,
      // The scope is stored with the run: every queue that delivers checks it, a producer without handlers too.
      trigger: (application, source) => ({
        event: 'release.ready',
        match: { taskId: application.taskId, releaseId: source.id, revision: source.revision },
      }),
      async execute(context) {
        const { directory, application } = context;
        if (context.options.emitEvent) {
          const source = readJson<{ release: Release }>(paths(directory).source).release;
          writeInboxEvent(directory, {
            id: `evt-${application.taskId}`,
            type: 'release.ready',
            taskId: application.taskId,
            releaseId: source.id,
            revision: source.revision,
          });
        }
        let delivered: string | null = null;
        return waitAndRun(
          context,
          context.options.waitMs ?? 0,
          () => `release.ready in ${paths(directory).inbox}`,
          async () => {
            const read = readInboxEvent(directory);
            if (read.kind === 'none') return;
            const id = read.kind === 'event' ? read.event.id : read.id;
            if (id === delivered) return;
            delivered = id;
            // A malformed file is delivered too, as an event whose payload says what was wrong: the task's
            // validateEvent refuses it and the run fails with TRIGGER_INVALID, as the seed asks of a bad event.
            const payload: Json =
              read.kind === 'event'
                ? { taskId: read.event.taskId, releaseId: read.event.releaseId, revision: read.event.revision }
                : { malformed: read.problem };
            await context.deliver({ id, type: 'release.ready', payload });
          },
        );
      },
    },
    options,
  );
}

/** Every flow by its command name. */
export const FLOWS: Record<FlowName, (options?: FlowOptions) => Promise<FlowOutput>> = {
  tracking: runStatusTracking,
  state: runStateCheck,
  stop: runSafeStop,
  scheduled: runScheduled,
  event: runEventTriggered,
};
