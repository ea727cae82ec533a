import type { Engine, RegisteredTask } from '../queue/engine.js';

/** The queue and task behind each handle `queue.define` returned: how `ctx.next({ children })` knows its tasks. */
const handles = new WeakMap<object, { engine: Engine; registered: RegisteredTask }>();

/** Records the queue and task a handle `queue.define` returned belongs to. */
export function rememberHandle(handle: object, engine: Engine, registered: RegisteredTask): void {
  handles.set(handle, { engine, registered });
}

/** The queue and task of a handle `queue.define` returned, or `undefined` for anything else. */
export function handleOf(value: unknown): { engine: Engine; registered: RegisteredTask } | undefined {
  return typeof value === 'object' && value !== null ? handles.get(value) : undefined;
}
