import type { RunRecord } from '../../machine/run-types.js';
import { DocketError } from '../../util/errors.js';
import type { Json } from '../../util/json.js';
import type { Engine, RegisteredTask } from '../queue/engine.js';
import type { ControlOptions, PageControl } from '../task/handlers.js';
import type { ChildOutcome, PreparedChildren } from './children.js';

/** One claimed page on its way through this process: what every step of its execution reads. */
export interface Page {
  engine: Engine;
  task: RegisteredTask;
  /** The run as claimed: this page's own copy. */
  run: RunRecord;
  /** The lease's fencing token this page holds. */
  token: number;
  /** `run.query` and `run.state`, frozen for the handler. */
  query: Json;
  state: Json | null;
  /** The signal of a `task.run` caller: its abort ends the run `CALLER_CANCELLED`. */
  callerSignal: AbortSignal | undefined;
  /** What the handler sees as `ctx.children`. */
  children: readonly ChildOutcome[];
}

/** The control object `ctx.next` or `ctx.end` returns, with what the commit needs from it. */
export interface Control extends PageControl {
  readonly kind: 'next' | 'end';
  readonly state: Json | null;
  readonly effect: ControlOptions<unknown>['effect'];
  /** The children `ctx.next` starts, or `null`. */
  readonly children: PreparedChildren | null;
}

/** What a page's handler issued: its one control (`ctx.next` or `ctx.end`), and a second call's contract violation. */
export class IssuedControl {
  control: Control | null = null;
  violation: string | null = null;

  constructor(private readonly runId: string) {}

  /**
   * Records `ctx.next` or `ctx.end`, checking its options; a second call is a contract violation, and so are
   * children that `prepare` refuses (or any given to `ctx.end`).
   */
  issue(
    kind: 'next' | 'end',
    nextState: Json | null,
    options: ControlOptions<unknown> | undefined,
    prepare?: (children: unknown, childFailure: unknown) => PreparedChildren,
  ): Control {
    const issued = this.control;
    if (issued !== null) {
      throw this.violate(kind, `ctx.${kind} called after ctx.${issued.kind}: a page ends once`);
    }
    if (options !== undefined && (typeof options !== 'object' || options === null)) {
      throw new DocketError('CONFIG_INVALID', `ctx.${kind} options must be an object`, { operation: `ctx.${kind}` });
    }
    if (options?.effect !== undefined && typeof options.effect !== 'function') {
      throw new DocketError('CONFIG_INVALID', 'effect must be a function', { operation: `ctx.${kind}` });
    }
    let children: PreparedChildren | null = null;
    if (options?.children !== undefined || options?.childFailure !== undefined) {
      if (kind === 'end' || prepare === undefined) throw this.violate(kind, 'children are started with ctx.next only');
      try {
        children = prepare(options.children, options.childFailure);
      } catch (error) {
        throw this.violate(kind, error instanceof Error ? error.message : String(error));
      }
    }
    const control: Control = Object.freeze({ kind, state: nextState, effect: options?.effect, children });
    this.control = control;
    return control;
  }

  /** Records a contract violation (the run fails at once, `HANDLER_CONTRACT_INVALID`) and answers its error. */
  private violate(kind: 'next' | 'end', message: string): DocketError {
    this.violation = message;
    return new DocketError('HANDLER_CONTRACT_INVALID', message, { operation: `ctx.${kind}`, runId: this.runId });
  }
}
