import { isDocketError } from '../../util/errors.js';
import { describeThrown, safeInstanceOf, safeProp, safeString, thrownMessage } from '../../util/safe-error.js';

/** The object `createQueue({ logger })` takes: pino's four methods, each called with fields and a message. */
export interface Logger {
  /** Detail nobody needs unless debugging. */
  debug(fields: object, message: string): void;
  /** What went as it should: a loop recovered, a queue closed. */
  info(fields: object, message: string): void;
  /** What an operator should see: a failed run, a dead letter, a recovered lease. */
  warn(fields: object, message: string): void;
  /** A loop or a commit that failed. */
  error(fields: object, message: string): void;
}

/** The log levels Docket writes at, lowest first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVEL_NUMBERS: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50 };

/**
 * The default logger: warnings and errors as one JSON line each on stderr, with pino's field names (`level` as a
 * number, `time` in epoch ms, `msg`), so a pino pretty-printer or a log shipper reads them as they are.
 */
export function stderrLogger(minimum: LogLevel = 'warn'): Logger {
  const write = (level: LogLevel) => {
    if (LEVEL_NUMBERS[level] < LEVEL_NUMBERS[minimum]) return () => undefined;
    return (fields: object, message: string) => {
      let line: string;
      try {
        line = JSON.stringify({
          level: LEVEL_NUMBERS[level],
          time: Date.now(),
          name: 'docket',
          ...serializable(fields),
          msg: message,
        });
      } catch {
        line = JSON.stringify({ level: LEVEL_NUMBERS[level], time: Date.now(), name: 'docket', msg: message });
      }
      process.stderr.write(`${line}\n`);
    };
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/**
 * The logger of a queue given none: `stderrLogger` at the level `DOCKET_LOG_LEVEL` names (`debug`, `info`, `warn`,
 * `error`), or nothing with `silent`; `warn` when it is unset or names no level.
 */
export function defaultLogger(level = process.env.DOCKET_LOG_LEVEL): Logger {
  if (level === 'silent') return SILENT_LOGGER;
  return stderrLogger(level !== undefined && level in LEVEL_NUMBERS ? (level as LogLevel) : 'warn');
}

/** The logger of `logger: false`: writes nothing. */
export const SILENT_LOGGER: Logger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});

/** True when `value` has the four methods of a `Logger`. */
export function isLogger(value: unknown): value is Logger {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (['debug', 'info', 'warn', 'error'] as const).every((level) => typeof candidate[level] === 'function');
}

/**
 * A logger that never throws into the runtime: a user's logger whose method throws loses that line, and nothing
 * else (logging is an observer, like telemetry).
 */
export function guardLogger(logger: Logger): Logger {
  const guard =
    (level: LogLevel) =>
    (fields: object, message: string): void => {
      try {
        logger[level](fields, message);
      } catch {
        // A failing logger has nowhere left to report to.
      }
    };
  return { debug: guard('debug'), info: guard('info'), warn: guard('warn'), error: guard('error') };
}

/**
 * The fields Docket logs of an error: its code, name and message (a `DocketError`'s own code, else a `code` the
 * error carries, else `INTERNAL`). Never its details or cause, which can hold a caller's payload.
 */
export function errorFields(error: unknown): { code: string; name: string; message: string } {
  if (isDocketError(error)) return { code: error.code, name: error.name, message: error.message };
  if (safeInstanceOf(error, Error)) {
    const own = safeProp(error, 'code');
    const code = typeof own === 'string' ? own : 'INTERNAL';
    return { code, name: safeString(error, 'name', 'Error'), message: thrownMessage(error) };
  }
  return { code: 'INTERNAL', name: 'Error', message: describeThrown(error) };
}

/**
 * An error as Docket logs it under `err`: a fresh `Error`, so that pino's error serializer (and the default logger)
 * print its type, message and stack, carrying only the code, name, message and stack of `error` (never its details
 * or cause, which can hold a caller's payload). A run's stored error has no stack: its logged one starts at its name
 * and message.
 */
export function logError(error: unknown): Error & { code: string } {
  const { code, name, message } = errorFields(error);
  return loggable({ code, name, message }, safeInstanceOf(error, Error) ? safeString(error, 'stack', '') : '');
}

/** `logError` for an error Docket stored as fields (a run's `RunError`, a callback's last error). */
export function logStoredError(error: { code: string; name: string; message: string }): Error & { code: string } {
  return loggable(error, '');
}

function loggable(
  { code, name, message }: { code: string; name: string; message: string },
  stack: string,
): Error & { code: string } {
  const logged = new Error(message) as Error & { code: string };
  logged.code = code;
  const hidden = (value: unknown) => ({ value, enumerable: false, writable: true, configurable: true });
  Object.defineProperties(logged, {
    name: hidden(name),
    stack: hidden(stack !== '' ? stack : `${name}: ${message}`),
    // pino's serializer names an error's type after its constructor, unless that is no function: then after its name.
    constructor: hidden(undefined),
  });
  return logged;
}

/** Fields as the default logger writes them: an `Error` under `err` as pino's serializer shows one. */
function serializable(fields: object): object {
  const err = (fields as { err?: unknown }).err;
  if (!(err instanceof Error)) return fields;
  const code = (err as { code?: unknown }).code;
  return { ...fields, err: { type: err.name, message: err.message, stack: err.stack, ...(code ? { code } : {}) } };
}
