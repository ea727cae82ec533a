/** The reason a `dead-letters replay` records when none is given. */
export const DEFAULT_REPLAY_REASON = 'replayed with docket dead-letters replay';

/** The command's usage, short. */
export const USAGE = `usage: docket [--db <file.sqlite> | --database-url <postgres://...> [--schema <s>]] [--namespace <ns>] [--json] <command>
       docket --version | --help

commands:
  runs list [--status <s>] [--task <name> [--schedule <id>]] [--group <g>] [--parent <runId>] [--limit <n>] [--cursor <c>] [--payloads]
  runs get <runId>
  runs history <runId>
  runs cancel|pause|resume|retry <runId> --reason <text> [--expected-revision <n>] [--command-id <id>]
  dead-letters list [--limit <n>] [--cursor <c>]
  dead-letters replay <eventId> [--reason <text>] [--expected-revision <n>] [--command-id <id>]
  schedules list [--limit <n>] [--cursor <c>]
  schedules pause|resume <scheduleId> --reason <text> [--expected-revision <n>] [--command-id <id>]
  schedules run-now <scheduleId> --reason <text> [--command-id <id>]
  tasks list
  tasks pause|resume <taskName> --reason <text> [--expected-revision <n>] [--command-id <id>]
  gc
  health
  stats [--task <name>]
  migrate [--dry-run]
  dashboard [--port <n>] [--host <h>] [--read-only] [--token <t>] [--allow-host <names>]
  watch [--task <name>] [--cursor <c> | --from-start]
  providers check [--provider <name>]

The store: --db (or DOCKET_DB) or --database-url (or DOCKET_DATABASE_URL). --json prints the API's objects. Exit: 0 ok, 1 a DocketError (code printed), 2 bad usage.`;

const steer = (
  verb: string,
) => `usage: docket --db <file> runs ${verb} <runId> --reason <text> [--expected-revision <n>] [--command-id <id>]
  Uses the run's current revision unless --expected-revision is given (a stale one: REVISION_CONFLICT), and a
  command id derived from the run and revision unless --command-id is given, so running it again is safe.`;

/** Each command's own usage. */
export const COMMAND_USAGE: Record<string, string> = {
  'runs list': `usage: docket --db <file> runs list [--status <s>] [--task <name> [--schedule <id>]] [--group <g>] [--parent <runId>] [--limit <n, max 200>] [--cursor <c>] [--payloads]
  Lists runs newest first: status, reason, task, page, attempt, age, revision (--payloads: query and state too, with --json).
  --group: only the runs started in that flow-control group.
  --parent: only the child runs that run's pages started.
  --schedule: only the runs that schedule made (its slots and its run-now runs); needs --task.`,
  'runs get':
    'usage: docket --db <file> runs get <runId>\n  Shows the RunInfo, callbacks included, its parent, and its children counted by status.',
  'runs history':
    'usage: docket --db <file> runs history <runId>\n  Shows every transition in order, with time, reason, actor and detail.',
  'runs cancel': steer('cancel'),
  'runs pause': steer('pause'),
  'runs resume': steer('resume'),
  'runs retry': `${steer('retry')}
  Only a failed run goes back to pending (OPERATOR_RETRY), its page and state kept; any other status: noop.`,
  'dead-letters list': 'usage: docket --db <file> dead-letters list [--limit <n>] [--cursor <c>]',
  'dead-letters replay': `usage: docket --db <file> dead-letters replay <eventId> [--reason <text>] [--expected-revision <n>] [--command-id <id>]
  Puts the dead letter back for delivery (replayGeneration + 1). The reason defaults to "${DEFAULT_REPLAY_REASON}".`,
  'schedules list': `usage: docket --db <file> schedules list [--limit <n, max 200>] [--cursor <c>]
  Lists schedules by id: task, cron, zone, enabled or paused, misfire, next and last slot, revision.`,
  'schedules pause': `usage: docket --db <file> schedules pause <scheduleId> --reason <text> [--expected-revision <n>] [--command-id <id>]
  Stops the schedule from firing; the runs it made stay.`,
  'schedules resume': `usage: docket --db <file> schedules resume <scheduleId> --reason <text> [--expected-revision <n>] [--command-id <id>]
  Lets the schedule fire again from its next slot after now; the slots of the pause are not caught up.`,
  'schedules run-now': `usage: docket --db <file> schedules run-now <scheduleId> --reason <text> [--command-id <id>]
  Starts one run of the schedule now, with its query; its slots go on as before. A repeated --command-id answers the
  run it started the first time.`,
  'tasks list': `usage: docket --db <file> tasks list
  Lists tasks by name: versions, active or paused, flow limits, runs waiting and running, revision.`,
  'tasks pause': `usage: docket --db <file> tasks pause <taskName> --reason <text> [--expected-revision <n>] [--command-id <id>]
  Stops every process from claiming the task's runs (every version); pages running finish, starts are still accepted.`,
  'tasks resume': `usage: docket --db <file> tasks resume <taskName> --reason <text> [--expected-revision <n>] [--command-id <id>]
  Lets the task's runs be claimed again.`,
  gc: 'usage: docket --db <file> gc\n  Deletes what retention allows; never a run whose callbacks are unsettled.',
  migrate: `usage: docket --db <file> migrate [--dry-run]
  Creates or upgrades Docket's tables in the file (or --database-url schema); the one command that does. With
  --dry-run it only says whether it would. Every other command refuses a store without them (SCHEMA_MISMATCH).`,
  health: 'usage: docket --db <file> health\n  ready, degraded or unavailable, with the reasons. Exit 1 unless ready.',
  stats: `usage: docket --db <file> stats [--task <name>]
  Counts runs by task and status, dead letters, and how long the oldest due run has waited (operator.stats()).`,
  dashboard: `usage: docket --db <file> dashboard [--port <n, default 4620>] [--host <h, default 127.0.0.1>] [--read-only] [--token <t>] [--allow-host <names>]
  Serves the web dashboard until Ctrl-C: overview, runs, one run's history and actions, dead letters, schedules.
  It answers requests for localhost, 127.0.0.1, [::1] and --host only; --allow-host adds names (comma-separated).
  --token (or DOCKET_DASHBOARD_TOKEN, kept out of ps) makes every request carry it; --read-only offers no action.`,
  watch: `usage: docket --db <file> watch [--task <name>] [--cursor <c> | --from-start] [--json]
  Prints every run transition as it is committed, by any process, until Ctrl-C: from now, after --cursor, or
  --from-start (the oldest entry kept). --json prints one object per line; its cursor resumes the feed after it.`,
  'providers check': `usage: docket providers check [--provider <name>]
  Loads docket.yaml/.env, sends one tiny request, prints the model, latency and finish reason (never the key).`,
};
