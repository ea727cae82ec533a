// The chaos trial, whatever the store: worker processes and a producer process run the chaos application (app.mjs)
// while the store's own kind of kill strikes (SIGKILL of a worker on SQLite, a terminated backend on PostgreSQL), and
// the producer is SIGKILLed and started again mid-way. Answers the figures; the store fixtures supply the processes,
// the kill and the queries. Used by both stores' CI-size tests and by `pnpm chaos`.

/** Reasons that mean an attempt was consumed: none of the chaos handlers ever throws, so each one is the trial's fault. */
const ATTEMPT_REASONS = "('ATTEMPT_FAILED', 'ATTEMPT_TIMEOUT', 'NON_RETRYABLE', 'ATTEMPTS_EXHAUSTED')";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A child process's lines on stdout, as they come. */
function lines(child, onLine) {
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      onLine(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
    }
  });
}

/**
 * Keeps `count` worker processes alive: one that exits by itself (its `ready()` lost its connection) is replaced;
 * `kill()` SIGKILLs a random one and starts another; `close()` SIGTERMs them all and answers the slowest close.
 */
function workerPool(spawnWorker, count) {
  const live = new Set();
  let next = 0;
  let closing = false;
  let restarts = 0;
  // Workers that printed `ready` (their SIGTERM handler is in place: a SIGTERM closes them).
  const readied = new WeakSet();
  const crashes = [];
  const start = () => {
    const child = spawnWorker(`chaos-${next++}`);
    live.add(child);
    lines(child, (line) => {
      if (line === 'ready') readied.add(child);
    });
    child.on('exit', (code, signal) => {
      if (!live.delete(child) || closing) return;
      // Exit 3: its start-up met a killed connection and said so with a coded error. Anything else is a crash.
      if (signal === null && code !== 3) crashes.push(code);
      restarts++;
      start();
    });
    return child;
  };
  for (let i = 0; i < count; i++) start();
  return {
    get restarts() {
      return restarts;
    },
    /** The exit codes of the workers that ended by themselves without a coded start-up failure. */
    get crashes() {
      return crashes;
    },
    kill() {
      const victim = [...live][Math.floor(Math.random() * live.size)];
      live.delete(victim);
      victim.kill('SIGKILL');
      start();
    },
    /**
     * SIGTERMs every worker; answers the longest `close()` one reported, or `null` if one did not exit in `boundMs` or
     * exited without closing after it was ready.
     */
    async close(boundMs) {
      closing = true;
      const closes = [...live].map(
        (child) =>
          new Promise((resolve) => {
            let closedMs = null;
            lines(child, (line) => {
              if (line.startsWith('closed ')) closedMs = Number(line.slice(7));
            });
            const timer = setTimeout(() => resolve(null), boundMs);
            child.on('exit', (_code, signal) => {
              clearTimeout(timer);
              // One still loading its modules has no handler yet: the SIGTERM ends it, with no queue to close.
              resolve(closedMs ?? (signal === 'SIGTERM' && !readied.has(child) ? 0 : null));
            });
            child.kill('SIGTERM');
          }),
      );
      const answers = await Promise.all(closes);
      for (const child of live) child.kill('SIGKILL');
      return answers.some((ms) => ms === null) ? null : Math.max(0, ...answers);
    },
  };
}

/**
 * Runs the producer until it prints `produced`, SIGKILLing it `kills` times along the way (each once it has started
 * more runs since the last kill), and starting it again after each.
 */
async function produceUnderKills(spawnProducer, kills, runs) {
  let killed = 0;
  for (;;) {
    const child = spawnProducer();
    const outcome = await new Promise((resolve) => {
      let started = 0;
      const target = killed < kills ? ((killed + 1) * runs) / (kills + 2) : Number.POSITIVE_INFINITY;
      lines(child, (line) => {
        if (line === 'produced') resolve('produced');
        else if (line.startsWith('started ')) started = Number(line.slice(8));
        if (started >= target) {
          child.kill('SIGKILL');
          resolve('killed');
        }
      });
      child.on('exit', () => resolve('exited'));
    });
    if (outcome === 'produced') {
      child.kill('SIGTERM');
      return killed;
    }
    if (outcome === 'killed') killed++;
  }
}

/**
 * One trial. `one(sql)` answers the number a query selects; `table(name)` names a table (SQLite: as is; PostgreSQL:
 * qualified by the schema); `killOne(workers)` strikes once, answering whether it hit. The figures that must be 0:
 * runs lost, not terminal or failed, pages committed twice, duplicate or missing business rows, attempts consumed,
 * callbacks missing, dead letters, gates not run, and workers that ended by themselves other than by a coded
 * start-up failure (`workerCrashes`, with their exit codes: 13 is a start-up that never settled); `closeMs` must not
 * be `null` (a worker whose close hung).
 */
export async function chaosTrial(options) {
  const { runs, pages = 3, gates = 20, workers = 2, kills, producerKills = 2, killEveryMs = 20 } = options;
  const {
    spread = true,
    timeoutMs = 120_000,
    closeBoundMs = 10_000,
    spawnWorker,
    spawnProducer,
    killOne,
    one,
    table,
  } = options;
  const started = Date.now();
  const pool = workerPool(spawnWorker, workers);
  const produced = produceUnderKills(spawnProducer, producerKills, runs);
  const written = () => one(`SELECT count(*) AS n FROM ${table('biz')}`);
  const total = runs * pages;
  let killed = 0;
  let lastKillAt = Date.now();
  const terminal = () =>
    one(`SELECT count(*) AS n FROM ${table('docket_runs')} WHERE task_name IN ('chaos', 'gate')
      AND status IN ('success', 'failed', 'cancelled')`);
  let stallAfterKillsMs = null;
  try {
    while (killed < kills && (await terminal()) < runs + gates) {
      await sleep(killEveryMs * (1 + Math.random()));
      // Spread, the kills follow the work (the k-th once 0.5·k/kills of the pages are written) so that they fall
      // over the first half of it whatever the machine's speed; otherwise they strike every killEveryMs.
      if (spread && (await written()) < (0.5 * (killed + 1) * total) / kills) continue;
      if (await killOne(pool)) {
        killed++;
        lastKillAt = Date.now();
      }
    }
    const atLastKill = await written();
    const producerKilled = await produced;
    const deadline = Date.now() + timeoutMs;
    const unsettled = () =>
      one(`SELECT count(*) AS n FROM ${table('docket_events')} WHERE status IN ('pending', 'retrying', 'delivering')`);
    while (((await terminal()) < runs + gates || (await unsettled()) > 0) && Date.now() < deadline) {
      if (stallAfterKillsMs === null && (await written()) > atLastKill) stallAfterKillsMs = Date.now() - lastKillAt;
      await sleep(50);
    }
    const closeMs = await pool.close(closeBoundMs);
    const figures = await countFigures(one, table, runs, gates, pages);
    return {
      runs,
      pages,
      workers,
      kills: killed,
      producerKills: producerKilled,
      workerRestarts: pool.restarts,
      workerCrashes: pool.crashes.length,
      workerCrashCodes: pool.crashes,
      stallAfterKillsMs,
      closeMs,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      ...figures,
    };
  } finally {
    await pool.close(1000);
  }
}

/** What the store holds after the trial, against what the producer started. */
async function countFigures(one, table, runs, gates, pages) {
  const [r, h, biz, cb, ev] = ['docket_runs', 'docket_history', 'biz', 'cb', 'docket_events'].map(table);
  const chaosRuns = `SELECT run_id FROM ${r} WHERE task_name = 'chaos'`;
  return {
    runsLost: runs - (await one(`SELECT count(*) AS n FROM ${r} WHERE task_name = 'chaos'`)),
    runsNotTerminal: await one(
      `SELECT count(*) AS n FROM ${r} WHERE task_name = 'chaos' AND status NOT IN ('success', 'failed', 'cancelled')`,
    ),
    runsFailed: await one(
      `SELECT count(*) AS n FROM ${r} WHERE task_name IN ('chaos', 'gate') AND status <> 'success'`,
    ),
    // A page committed twice would leave two history entries that end the same page.
    pagesCommittedTwice: await one(`SELECT count(*) AS n FROM (SELECT run_id FROM ${h}
      WHERE reason IN ('PAGE_COMMITTED', 'COMPLETED') AND run_id IN (${chaosRuns})
      GROUP BY run_id HAVING count(*) > ${pages}) t`),
    duplicateBusinessRows: await one(`SELECT coalesce(sum(n - 1), 0) AS n FROM (SELECT count(*) AS n
      FROM ${biz} GROUP BY run_id, page HAVING count(*) > 1) t`),
    missingBusinessRows:
      runs * pages + gates - (await one(`SELECT count(*) AS n FROM (SELECT DISTINCT run_id, page FROM ${biz}) t`)),
    attemptsConsumed: await one(`SELECT count(*) AS n FROM ${h} WHERE reason IN ${ATTEMPT_REASONS}`),
    callbacksMissing: await one(
      `SELECT count(*) AS n FROM ${r} WHERE task_name = 'chaos' AND status = 'success'
        AND run_id NOT IN (SELECT run_id FROM ${cb})`,
    ),
    deadLetters: await one(`SELECT count(*) AS n FROM ${ev} WHERE status = 'dead_letter'`),
    gatesNotRun: gates - (await one(`SELECT count(*) AS n FROM ${r} WHERE task_name = 'gate' AND status = 'success'`)),
    tickRuns: await one(`SELECT count(*) AS n FROM ${r} WHERE task_name = 'tick'`),
    tickRunsFailed: await one(`SELECT count(*) AS n FROM ${r} WHERE task_name = 'tick' AND status = 'failed'`),
    recoveries: await one(`SELECT count(*) AS n FROM ${h} WHERE reason = 'LEASE_EXPIRED'`),
  };
}

/** The figures of `chaosTrial` that must be 0 (and `closeMs`, which must be a number): the names of those that are not. */
export function badFigures(figures) {
  const zero = [
    'runsLost',
    'runsNotTerminal',
    'runsFailed',
    'pagesCommittedTwice',
    'duplicateBusinessRows',
    'missingBusinessRows',
    'attemptsConsumed',
    'callbacksMissing',
    'deadLetters',
    'gatesNotRun',
    'tickRunsFailed',
    'workerCrashes',
  ];
  const bad = zero.filter((key) => figures[key] !== 0);
  if (figures.closeMs === null) bad.push('closeMs');
  if (!(figures.tickRuns > 0)) bad.push('tickRuns');
  if (figures.integrity !== undefined && figures.integrity !== 'ok') bad.push('integrity');
  return bad;
}
