import { errorFields, type Logger, logError } from '../observe/logger.js';

/** The loops of a queue whose errors are logged and shown by `health()`. */
export type LoopName = 'worker' | 'callbacks' | 'schedules' | 'retention' | 'commits';

/** While one error repeats, it is logged again at most this often (ms). */
const REPEAT_EVERY_MS = 60_000;

/**
 * The errors of one loop: the last one (for `health()` until a later turn succeeds) and their log lines. Every error
 * is logged at `error`; while the same message repeats turn after turn (a database that is down), it is logged once
 * a minute with how often it repeated, and the loop's recovery is logged at `info` with the count.
 */
export class LoopErrors {
  /** The last error, or `null` once a turn succeeded. */
  last: unknown = null;
  private streak = 0;
  private repeated = 0;
  private lastMessage = '';
  private lastLoggedAt = 0;

  constructor(
    private readonly log: Logger,
    private readonly loop: LoopName,
  ) {}

  /** A turn failed with `error`: keep it and log it (`fields` add context such as the run id). */
  failed(error: unknown, fields: object = {}): void {
    this.last = error;
    this.streak++;
    const err = errorFields(error);
    const now = Date.now();
    if (err.message === this.lastMessage && now - this.lastLoggedAt < REPEAT_EVERY_MS) {
      this.repeated++;
      return;
    }
    const repeats = this.repeated > 0 ? { repeated: this.repeated } : {};
    this.log.error(
      { loop: this.loop, ...fields, code: err.code, err: logError(error), ...repeats },
      `${this.loop} loop failed`,
    );
    this.lastMessage = err.message;
    this.lastLoggedAt = now;
    this.repeated = 0;
  }

  /** A turn succeeded: clear the error, and log the recovery when there was one. */
  ok(): void {
    if (this.streak === 0) return;
    this.log.info({ loop: this.loop, failures: this.streak }, `${this.loop} loop recovered`);
    this.last = null;
    this.streak = 0;
    this.repeated = 0;
    this.lastMessage = '';
  }
}
