import { describe, expectTypeOf, it } from 'vitest';
import {
  type BatchTask,
  createQueue,
  DocketError,
  type DocketErrorCode,
  type ExecuteContext,
  type HistoryEntry,
  isDocketError,
  type Json,
  type PageControl,
  type Queue,
  type RunInfo,
  type RunStatus,
  type StartInput,
  type Store,
  type WaitOptions,
} from '../src/index.js';
import type { MemoryTransaction } from '../src/store/index.js';
import { memoryStore } from '../src/testing/index.js';

interface Query {
  releaseId: string;
  revision: number;
}
interface State {
  afterId: number;
}

const queue = createQueue({ store: memoryStore() });

describe('the public API as an application sees it', () => {
  it('define<Q, S> types ctx.query, ctx.state, ctx.next and the effect transaction', () => {
    const task = queue.define<Query, State>(
      { name: 'notice', version: '1' },
      {
        execute(ctx) {
          expectTypeOf(ctx).toExtend<ExecuteContext<Query, State, MemoryTransaction>>();
          expectTypeOf(ctx.query).toEqualTypeOf<Query>();
          expectTypeOf(ctx.state).toEqualTypeOf<State | null>();
          expectTypeOf(ctx.next).parameter(0).toEqualTypeOf<State | undefined>();
          // @ts-expect-error: the state must be the task's S
          ctx.next({ afterId: 'x' });
          return ctx.end({
            effect: (tx) => {
              expectTypeOf(tx).toEqualTypeOf<MemoryTransaction>();
            },
          });
        },
      },
    );
    expectTypeOf(task).toEqualTypeOf<BatchTask<Query, State>>();
  });

  it('start takes the task query, an optional key, trigger and limits, and answers the run id', () => {
    const task = queue.define<Query, State>({ name: 'start-types', version: '1' });
    expectTypeOf(task.start).parameter(0).toEqualTypeOf<StartInput<Query>>();
    expectTypeOf(task.start).returns.resolves.toEqualTypeOf<{ runId: string; created: boolean }>();
    // @ts-expect-error: the query must be the task's Q
    void task.start({ query: { releaseId: 1 } });
    void task.start({ query: { releaseId: 'r', revision: 1 }, trigger: { at: new Date() }, limits: { modelCalls: 1 } });
  });

  it('RunInfo carries the typed query and state and the documented fields', () => {
    const task = queue.define<Query, State>({ name: 'info-types', version: '1' });
    expectTypeOf(task.get).returns.resolves.toEqualTypeOf<RunInfo<Query, State> | null>();
    expectTypeOf<RunInfo<Query, State>['query']>().toEqualTypeOf<Query>();
    expectTypeOf<RunInfo<Query, State>['state']>().toEqualTypeOf<State | null>();
    expectTypeOf<RunInfo['status']>().toEqualTypeOf<RunStatus>();
    expectTypeOf<RunInfo['revision']>().toEqualTypeOf<number>();
    expectTypeOf<RunInfo['limits']['modelCalls']>().toEqualTypeOf<{ limit: number | null; used: number }>();
    expectTypeOf<RunInfo['callbacks']>().toEqualTypeOf<{ pending: number; delivered: number; deadLetters: number }>();
    expectTypeOf(task.history).returns.resolves.toEqualTypeOf<HistoryEntry[]>();
    expectTypeOf<RunInfo>().toEqualTypeOf<RunInfo<Json, Json>>();
  });

  it('createQueue takes a store chosen at run time, and effects see the union of their transaction types', () => {
    interface FileTx {
      file: true;
    }
    interface ServerTx {
      server: true;
    }
    const fileStore = memoryStore() as unknown as Store<FileTx>;
    const serverStore = memoryStore() as unknown as Store<ServerTx>;
    const chosen = createQueue({ store: Math.random() > 0.5 ? fileStore : serverStore });
    expectTypeOf(chosen).toEqualTypeOf<Queue<FileTx | ServerTx>>();
    chosen.define(
      { name: 'either', version: '1' },
      { execute: (ctx) => ctx.end({ effect: (tx) => expectTypeOf(tx).toEqualTypeOf<FileTx | ServerTx>() }) },
    );
    expectTypeOf(createQueue({ store: fileStore })).toEqualTypeOf<Queue<FileTx>>();
  });

  it('task.wait answers the typed RunInfo or null', () => {
    const task = queue.define<Query, State>({ name: 'wait-types', version: '1' });
    expectTypeOf(task.wait).returns.resolves.toEqualTypeOf<RunInfo<Query, State> | null>();
    expectTypeOf(task.wait).parameter(1).toEqualTypeOf<WaitOptions | undefined>();
  });

  it('DocketError codes are a closed union of UPPER_SNAKE names', () => {
    expectTypeOf<DocketError['code']>().toEqualTypeOf<DocketErrorCode>();
    expectTypeOf<'CONFIG_INVALID'>().toExtend<DocketErrorCode>();
    expectTypeOf<'PROVIDER_HTTP_ERROR'>().toExtend<DocketErrorCode>();
    expectTypeOf<'NOT_A_CODE'>().not.toExtend<DocketErrorCode>();
    const error: unknown = new DocketError('QUEUE_CLOSED', 'closed');
    if (isDocketError(error)) expectTypeOf(error.code).toEqualTypeOf<DocketErrorCode>();
    expectTypeOf<PageControl['kind']>().toEqualTypeOf<'next' | 'end'>();
  });
});
