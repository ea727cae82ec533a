import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Release } from './app-store.js';

/** The five lifecycle flows. */
export type FlowName = 'tracking' | 'state' | 'stop' | 'scheduled' | 'event';

/** `application.json`: what created the task directory, fixed at creation. */
export interface Application {
  flow: FlowName;
  taskId: string;
  runId: string | null;
  createdAt: string;
  limits: { modelCalls: number | null; deadlineMs: number | null };
  dueAt: string | null;
}

/** The event file a producer writes into `inbox/task.json`. */
export interface InboxEvent {
  id: string;
  type: 'release.ready';
  taskId: string;
  releaseId: string;
  revision: number;
}

/** The largest event file accepted. */
export const MAX_EVENT_BYTES = 16_384;

/** Writes JSON through a temporary file and a rename, so readers never see half a file. */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeTextAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Writes text through a temporary file and a rename. */
function writeTextAtomic(path: string, text: string): void {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, path);
}

/** Reads a JSON file. */
export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** Paths inside a task directory. */
export function paths(directory: string) {
  return {
    application: join(directory, 'application.json'),
    source: join(directory, 'task.source.json'),
    database: join(directory, 'lifecycle.sqlite'),
    inbox: join(directory, 'inbox', 'task.json'),
    result: join(directory, 'results', 'task.json'),
  };
}

/** Creates a new task directory under `root` with its source file and sub-directories. */
export function createTaskDirectory(
  root: string,
  flow: FlowName,
  release: Release,
  application: Omit<Application, 'flow' | 'taskId' | 'createdAt' | 'runId'>,
): { directory: string; application: Application } {
  const taskId = `${flow}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  const directory = resolve(root, taskId);
  mkdirSync(join(directory, 'inbox'), { recursive: true });
  mkdirSync(join(directory, 'results'), { recursive: true });
  const app: Application = { flow, taskId, runId: null, createdAt: new Date().toISOString(), ...application };
  writeJsonAtomic(paths(directory).source, { release: { ...release, id: `REL-${taskId}` } });
  writeJsonAtomic(paths(directory).application, app);
  return { directory, application: app };
}

/** Opens an existing task directory made by `flow`; a directory made by another flow is refused. */
export function openTaskDirectory(directory: string, flow: FlowName): Application {
  const file = paths(directory).application;
  if (!existsSync(file)) throw new Error(`${directory} is not a task directory (no application.json)`);
  const application = readJson<Application>(file);
  if (application.flow !== flow) {
    throw new Error(`${directory} was made by the ${application.flow} flow, not ${flow}: refused`);
  }
  return application;
}

/** What `readInboxEvent` found: no file yet, a well-formed event, or a file that is no valid event (and why). */
export type InboxRead =
  | { kind: 'none' }
  | { kind: 'event'; event: InboxEvent }
  | { kind: 'malformed'; id: string; problem: string };

/**
 * Reads `inbox/task.json` if a producer wrote it. A file over 16 KiB, not JSON, or not of the event's shape is
 * `malformed`, with what was wrong and an id made from its bytes (so the same bad file is one delivery).
 */
export function readInboxEvent(directory: string): InboxRead {
  const file = paths(directory).inbox;
  if (!existsSync(file)) return { kind: 'none' };
  const bytes = readFileSync(file);
  const id = `malformed-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}`;
  if (bytes.length > MAX_EVENT_BYTES) {
    return { kind: 'malformed', id, problem: `the event file is ${bytes.length} bytes, over ${MAX_EVENT_BYTES}` };
  }
  let event: Partial<InboxEvent>;
  try {
    event = JSON.parse(bytes.toString('utf8')) as Partial<InboxEvent>;
  } catch (error) {
    return { kind: 'malformed', id, problem: `the event file is not JSON: ${(error as Error).message}` };
  }
  const problem = shapeProblem(event);
  return problem === null ? { kind: 'event', event: event as InboxEvent } : { kind: 'malformed', id, problem };
}

/** Whether `id` is an id `events.deliver` takes: 1 to 256 bytes of well-formed Unicode without NUL. */
function isEventId(id: string): boolean {
  const bytes = Buffer.byteLength(id, 'utf8');
  // A lone surrogate: a string that is not well-formed Unicode.
  const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  return bytes >= 1 && bytes <= 256 && !id.includes('\u0000') && !lone.test(id);
}

/** What is wrong with a parsed event file's shape, or `null`. */
function shapeProblem(event: Partial<InboxEvent> | null): string | null {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return 'the event is not a JSON object';
  if (event.type !== 'release.ready') return `the event type is ${JSON.stringify(event.type)}, not "release.ready"`;
  for (const field of ['id', 'taskId', 'releaseId'] as const) {
    if (typeof event[field] !== 'string') return `the event has no string ${field}`;
  }
  if (!isEventId(event.id as string)) {
    return 'the event has no id of 1 to 256 bytes of well-formed text without NUL (as events.deliver takes)';
  }
  if (typeof event.revision !== 'number') return 'the event has no numeric revision';
  return null;
}

/** The producer side of the event flow: writes the event file atomically. */
export function writeInboxEvent(directory: string, event: InboxEvent): void {
  // The bytes checked are the bytes written: the reader measures the file.
  const text = JSON.stringify(event);
  if (Buffer.byteLength(text) > MAX_EVENT_BYTES) throw new Error(`event larger than ${MAX_EVENT_BYTES} bytes`);
  writeTextAtomic(paths(directory).inbox, text);
}
