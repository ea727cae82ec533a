import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createQueue, DocketError, isDocketError, type Queue, RUN_STATUSES, type RunStatus } from '@docket/core';
import { dashboardCommand } from './dashboard-command.js';
import { deadLettersCommand } from './dead-letters-command.js';
import { useColour } from './format.js';
import { type MigrateTarget, migrateCommand } from './migrate-command.js';
import { providersCheck } from './providers-command.js';
import { runsCommand } from './runs-command.js';
import { schedulesCommand } from './schedules-command.js';
import { statsCommand } from './stats-command.js';
import { openCommandStore } from './stores.js';
import { closest } from './suggest.js';
import { tasksCommand } from './tasks-command.js';
import { COMMAND_USAGE, USAGE } from './usage.js';
import { watchCommand } from './watch-command.js';

/** Where the command writes; tests pass their own. */
export interface Io {
  /** Writes a line of output (stdout). */
  out: (text: string) => void;
  /** Writes a line of diagnostics (stderr). */
  err: (text: string) => void;
  colour: boolean;
  env: Record<string, string | undefined>;
  cwd: string;
  /** When a long-running command (`dashboard`) stops; by default at SIGINT or SIGTERM. */
  stopped?: Promise<unknown>;
}

class UsageError extends Error {}

const FLAGS = {
  db: { type: 'string' },
  'database-url': { type: 'string' },
  namespace: { type: 'string' },
  schema: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  status: { type: 'string' },
  task: { type: 'string' },
  group: { type: 'string' },
  parent: { type: 'string' },
  schedule: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  payloads: { type: 'boolean' },
  reason: { type: 'string' },
  'expected-revision': { type: 'string' },
  'command-id': { type: 'string' },
  provider: { type: 'string' },
  'dry-run': { type: 'boolean' },
  port: { type: 'string' },
  host: { type: 'string' },
  'read-only': { type: 'boolean' },
  token: { type: 'string' },
  'allow-host': { type: 'string' },
  'from-start': { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parse>['values'];

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true });
}

/** Which flags each command takes beside the global ones. */
const ALLOWED: Record<string, string[]> = {
  'runs list': ['status', 'task', 'group', 'parent', 'schedule', 'limit', 'cursor', 'payloads'],
  'runs get': [],
  'runs history': [],
  'runs cancel': ['reason', 'expected-revision', 'command-id'],
  'runs pause': ['reason', 'expected-revision', 'command-id'],
  'runs resume': ['reason', 'expected-revision', 'command-id'],
  'runs retry': ['reason', 'expected-revision', 'command-id'],
  'dead-letters list': ['limit', 'cursor'],
  'schedules list': ['limit', 'cursor'],
  'schedules pause': ['reason', 'expected-revision', 'command-id'],
  'schedules resume': ['reason', 'expected-revision', 'command-id'],
  'schedules run-now': ['reason', 'command-id'],
  'tasks list': [],
  'tasks pause': ['reason', 'expected-revision', 'command-id'],
  'tasks resume': ['reason', 'expected-revision', 'command-id'],
  'dead-letters replay': ['reason', 'expected-revision', 'command-id'],
  gc: [],
  health: [],
  stats: ['task'],
  migrate: ['dry-run'],
  dashboard: ['port', 'host', 'read-only', 'token', 'allow-host'],
  watch: ['task', 'cursor', 'from-start'],
  'providers check': ['provider'],
};
const GLOBAL = ['db', 'database-url', 'schema', 'namespace', 'json', 'help', 'version'];
/** The commands that change something, each but `gc` about one run, dead letter or schedule named by its id. */
const STEERING = [
  'runs cancel',
  'runs pause',
  'runs resume',
  'runs retry',
  'dead-letters replay',
  'schedules pause',
  'schedules resume',
  'schedules run-now',
  'tasks pause',
  'tasks resume',
];
const NEEDS_ID = new Set(['runs get', 'runs history', ...STEERING]);
const WRITES = new Set([...STEERING, 'gc']);
/** Commands of one word; the others are `<noun> <verb>`. */
const SINGLE_WORD = new Set(['gc', 'health', 'migrate', 'stats', 'dashboard', 'watch']);

/** A lone `--` ends the options (POSIX): a flag after it reaches the command as an argument. Says so. */
function endOfOptionsHint(args: readonly string[]): string {
  const flagLike = args.find((arg) => arg.startsWith('-'));
  return flagLike === undefined ? '' : ` (${flagLike} came after a lone --, which ends the options)`;
}

/** The `runs` commands that steer a run; each needs `--reason`. */
const STEERS = ['cancel', 'pause', 'resume', 'retry'];

function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} takes a whole number`);
  return Number(value);
}

/** This package's version, read from its package.json (next to `src/` and `dist/` alike). */
function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

/** Runs the `docket` command; resolves the exit code: 0 success, 1 a DocketError or a failed check, 2 bad usage. */
export async function main(argv: string[], io: Io): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parse(argv));
  } catch (error) {
    io.err(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const command = SINGLE_WORD.has(positionals[0] ?? '')
    ? (positionals[0] as string)
    : positionals.slice(0, 2).join(' ');
  if (values.version) {
    io.out(cliVersion());
    return 0;
  }
  if (values.help) {
    io.out(ALLOWED[command] ? (COMMAND_USAGE[command] ?? USAGE) : USAGE);
    return 0;
  }
  try {
    const checked = checkUsage(command, values, positionals);
    if (command === 'providers check') return await providersCheck(values.provider, io, values.json === true);
    return await onStore(command, values, checked, io);
  } catch (error) {
    return reportError(error, command, io);
  }
}

/** The largest page the operator API lists (`runs.list`, `deadLetters.list`, `schedules.list`). */
const LIST_LIMIT_MAX = 200;

/** The flags and arguments of a command after its usage was checked. */
interface CheckedUsage {
  args: string[];
  limit: number | undefined;
  port: number | undefined;
  expectedRevision: number | undefined;
}

/** Checks the command, its flags and its arguments; throws `UsageError` naming what is wrong. */
function checkUsage(command: string, values: Values, positionals: string[]): CheckedUsage {
  const allowed = ALLOWED[command];
  if (!allowed) {
    const given = positionals.slice(0, 2).join(' ');
    const near = closest(given, Object.keys(ALLOWED)) ?? closest(positionals[0] ?? '', Object.keys(ALLOWED));
    const suggestion = near === null ? '' : ` (did you mean "docket ${near}"?)`;
    const unknown = `unknown command: ${positionals.join(' ')}${suggestion}${endOfOptionsHint(positionals)}`;
    throw new UsageError(positionals.length === 0 ? 'name a command' : unknown);
  }
  for (const [flag, value] of Object.entries(values)) {
    if (value !== undefined && !GLOBAL.includes(flag) && !allowed.includes(flag)) {
      throw new UsageError(`${command} does not take --${flag}`);
    }
  }
  const args = positionals.slice(command.split(' ').length);
  const expectedArgs = NEEDS_ID.has(command) ? 1 : 0;
  if (args.length !== expectedArgs) {
    const wrong = expectedArgs === 1 ? `${command} takes one id` : `${command} takes no arguments`;
    throw new UsageError(`${wrong}${endOfOptionsHint(args)}`);
  }
  const steers = command.startsWith('runs ') && STEERS.includes(command.slice(5));
  const pauses = ['schedules pause', 'schedules resume', 'schedules run-now', 'tasks pause', 'tasks resume'];
  if ((steers || pauses.includes(command)) && !values.reason) {
    throw new UsageError(`${command} needs --reason <text>`);
  }
  if (values.status !== undefined && !RUN_STATUSES.includes(values.status as RunStatus)) {
    throw new UsageError(`--status must be one of ${RUN_STATUSES.join(', ')}`);
  }
  if (values.schedule !== undefined && values.task === undefined) {
    throw new UsageError("--schedule needs --task <name> (the schedule's task)");
  }
  if (values.parent !== undefined && !/^[0-9a-f]{32}$/.test(values.parent)) {
    throw new UsageError('--parent takes a run id (32 lowercase hex characters)');
  }
  const limit = integer(values.limit, '--limit');
  if (limit !== undefined && (limit < 1 || limit > LIST_LIMIT_MAX)) {
    throw new UsageError(`--limit takes 1 to ${LIST_LIMIT_MAX}`);
  }
  const port = integer(values.port, '--port');
  if (port !== undefined && port > 65_535) throw new UsageError('--port takes 0 to 65535');
  if (values.host !== undefined && values.host.trim() === '') {
    throw new UsageError('--host needs a name or address (0.0.0.0 listens on every interface)');
  }
  const expectedRevision = integer(values['expected-revision'], '--expected-revision');
  return { args, limit, port, expectedRevision };
}

/** The store the flags (or `DOCKET_DATABASE_URL`, `DOCKET_DB`) name. */
function storeTarget(values: Values, io: Io): MigrateTarget {
  const databaseUrl = values['database-url'] ?? (values.db === undefined ? io.env.DOCKET_DATABASE_URL : undefined);
  const file = values.db ?? (databaseUrl === undefined ? io.env.DOCKET_DB : undefined);
  if (databaseUrl !== undefined && values.db !== undefined)
    throw new UsageError('name one store: --db or --database-url');
  if (databaseUrl !== undefined) return { databaseUrl, ...(values.schema ? { schema: values.schema } : {}) };
  if (file === undefined) {
    throw new UsageError('name the store: --db <file.sqlite> (or DOCKET_DB), or --database-url <postgres://...>');
  }
  return { file };
}

/** Runs a command that needs a store: `migrate` on its own, the others through a producer queue on it. */
async function onStore(command: string, values: Values, checked: CheckedUsage, io: Io): Promise<number> {
  const target = storeTarget(values, io);
  if (command === 'migrate') {
    const print = (value: unknown, human: () => string) =>
      io.out(values.json ? JSON.stringify(value, null, 2) : human());
    return await migrateCommand(target, values['dry-run'] === true, print);
  }
  if ('file' in target && !existsSync(target.file)) {
    throw new DocketError('CONNECTION_UNAVAILABLE', `no database at ${target.file}`, { operation: 'docket' });
  }
  const writes = WRITES.has(command) || (command === 'dashboard' && values['read-only'] !== true);
  const store = await openCommandStore(target, writes ? 'write' : 'read');
  const queue = createQueue({ store, namespace: values.namespace ?? 'default', runtime: { mode: 'producer' } });
  try {
    await queue.ready();
    if (command === 'dashboard') {
      const flags = {
        port: checked.port ?? 4620,
        host: values.host ?? '127.0.0.1',
        readOnly: values['read-only'] === true,
        token: values.token ?? io.env.DOCKET_DASHBOARD_TOKEN,
        allowHosts: (values['allow-host'] ?? '').split(',').filter((h) => h.trim() !== ''),
      };
      return await dashboardCommand(queue, flags, io, io.stopped);
    }
    if (command === 'watch') {
      if (values.cursor !== undefined && values['from-start']) {
        throw new UsageError('watch takes --cursor or --from-start, not both');
      }
      const flags = { task: values.task, cursor: values.cursor, fromStart: values['from-start'] === true };
      return await watchCommand(queue, { ...flags, json: values.json === true }, io, io.stopped);
    }
    const { limit, expectedRevision } = checked;
    return await dispatch(queue, command, checked.args[0] ?? '', { ...values, limit, expectedRevision }, io);
  } finally {
    await queue.close();
  }
}

/** Writes a failed command's error: usage errors exit 2, a `DocketError` (or any other) 1. */
function reportError(error: unknown, command: string, io: Io): number {
  if (error instanceof UsageError) {
    io.err(`${error.message}\n${COMMAND_USAGE[command] ?? USAGE}`);
    return 2;
  }
  if (isDocketError(error)) {
    const hint = error.code === 'SCHEMA_MISMATCH' ? " (docket migrate creates or upgrades Docket's tables)" : '';
    io.err(`${error.code}: ${error.message}${hint}`);
    return 1;
  }
  io.err(`error: ${(error as Error).message}`);
  return 1;
}

type Options = Omit<Values, 'limit'> & { limit: number | undefined; expectedRevision: number | undefined };

async function dispatch(queue: Queue, command: string, id: string, o: Options, io: Io): Promise<number> {
  const op = queue.operator;
  const json = o.json === true;
  const print = (value: unknown, human: () => string) => io.out(json ? JSON.stringify(value, null, 2) : human());
  switch (command) {
    case 'runs list':
    case 'runs get':
    case 'runs history':
    case 'runs cancel':
    case 'runs pause':
    case 'runs resume':
    case 'runs retry':
      return runsCommand(op, command, id, o, print, io.colour);
    case 'dead-letters list':
    case 'dead-letters replay':
      return deadLettersCommand(op, command, id, o, print);
    case 'schedules list':
    case 'schedules pause':
    case 'schedules resume':
    case 'schedules run-now':
      return schedulesCommand(op, command.slice(10) as 'list' | 'pause' | 'resume' | 'run-now', id, o, print);
    case 'tasks list':
    case 'tasks pause':
    case 'tasks resume':
      return tasksCommand(op, command.slice(6) as 'list' | 'pause' | 'resume', id, o, print);
    case 'gc': {
      const collected = await op.maintenance.collect();
      print(
        collected,
        () => `collected ${collected.runs} runs, ${collected.events} events, ${collected.deadLetters} dead letters`,
      );
      return 0;
    }
    case 'stats':
      return statsCommand(op, o.task, print);
    case 'health': {
      const health = await op.health();
      print(health, () => [health.status, ...health.reasons.map((r) => `  ${r}`)].join('\n'));
      return health.status === 'ready' ? 0 : 1;
    }
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

/** The real terminal's Io. */
export function processIo(): Io {
  return {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    colour: useColour(process.stdout),
    env: process.env,
    cwd: process.cwd(),
  };
}
